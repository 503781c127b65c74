#pragma once
// The exact paired permutation test: under "no difference" each pair's difference is as likely to
// have come out with the other sign, so the observed |sum of differences| is compared with the sums of
// every sign pattern. Two-sided p = the share of patterns whose |sum| is at least the observed one
// (scipy.stats.permutation_test((d,), np.mean, permutation_type="samples"), which equals
// 2 * min(P(S <= s), P(S >= s)) because the null is symmetric).
//
// - Zero differences are dropped (n counts the rest): flipping a zero changes no sum, so the p-value
//   is the same with or without them, and the smallest p is set by the pairs that differ.
// - n <= kExactMaxPairs: all 2^n patterns, counted by meet in the middle (2 x 2^(n/2) half sums,
//   sorted, one binary search per half sum), so 20 pairs cost ~ 2,000 sums, not a million.
// - More pairs: kSamples random patterns from a fixed seed (the same data always gives the same p),
//   p = (count + 1) / (kSamples + 1) as scipy does for a Monte Carlo p, so it is never 0.
// The smallest two-sided p that n pairs allow is 2 / 2^n (every sign the same): 0.25 with 3 pairs,
// 0.0625 with 5, 0.03125 with 6. When that is not below the level no outcome can be significant.
#include <cstdint>
#include <span>

namespace kvscope {

struct SignFlipResult {
  int n = 0;               // non-zero differences used
  int zeros = 0;           // zero differences dropped
  double statistic = 0;    // the mean of the non-zero differences (its sign says which way)
  double p_value = 1;      // 1 when n = 0
  bool exact = true;       // every pattern counted (else sampled)
  long long patterns = 0;  // patterns counted: 2^n when exact, else kSamples
};

class SignFlipTest {
 public:
  static constexpr int kExactMaxPairs = 20;
  static constexpr int kSamples = 100000;
  static constexpr std::uint64_t kSeed = 20240601;

  static SignFlipResult test(std::span<const double> differences);

  // P(|sum of s_i v_i| >= |sum of v_i|) over sign patterns s: exact up to kExactMaxPairs values,
  // else sampled as above. Also the exact Wilcoxon test with tied ranks (v = signed ranks).
  static double twoSidedP(std::span<const double> values, bool* exact = nullptr);

  // 2 / 2^n, capped at 1 (and 1 for n <= 0); the Wilcoxon signed-rank test has the same floor.
  static double smallestPValue(int n);
  // The fewest differing pairs whose smallest p is below the level (6 at 0.05, 8 at 0.01).
  static int pairsNeeded(double level);
};

}  // namespace kvscope
