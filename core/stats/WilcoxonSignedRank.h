#pragma once
// The paired Wilcoxon signed-rank test, two-sided.
//
// Conventions (the same as scipy.stats.wilcoxon with zero_method="wilcox", correction=True):
// - Zero differences are dropped before ranking (Wilcoxon's convention; Pratt's would rank them
//   and then drop them). n is the number of non-zero differences.
// - |d| are ranked with ties given their average rank. W+ and W- are the rank sums of the positive
//   and negative differences; the statistic is W = min(W+, W-).
// - Exact p-value when there are no ties and n <= kExactMaxN: the null distribution of W+ (every
//   sign pattern equally likely) is enumerated by a DP over ranks, p = 2 * min(P(W+ <= w+), P(W+ >= w+)),
//   capped at 1. Unlike scipy 1.10, zeros do not force the approximation: they are dropped first, so
//   six non-zero pairs of one sign give 2/64 = 0.0625 and never the approximation's 0.046.
// - Ties and n <= kExactTiesMaxN: exact over every sign pattern of the average ranks (the
//   permutation distribution; scipy.stats.permutation_test on the signed ranks). scipy 1.10's
//   "exact" ignores ties and its approximation is poor at such n.
// - Otherwise the normal approximation: mean n(n+1)/4, variance n(n+1)(2n+1)/24 - sum(t^3 - t)/48
//   over tie groups of size t, continuity correction 0.5 towards the mean.
// - All differences zero: n = 0, p = 1 (no evidence of any difference).
#include <span>

namespace kvscope {

struct WilcoxonResult {
  int n = 0;      // non-zero differences used
  int zeros = 0;  // zero differences dropped
  double w_plus = 0, w_minus = 0;
  double statistic = 0;  // min(W+, W-)
  double p_value = 1;
  bool exact = false;  // exact enumeration (else the normal approximation)
  bool ties = false;   // some |d| tied (exact by enumeration up to kExactTiesMaxN, else approximated)
  double z = 0;        // the approximation's z (0 when exact)
};

class WilcoxonSignedRank {
 public:
  static constexpr int kExactMaxN = 50;      // 2^50 sign patterns still count exactly in a double
  static constexpr int kExactTiesMaxN = 20;  // sign patterns of tied ranks enumerated (SignFlipTest)

  // Differences d_i = x_i - y_i of paired observations.
  static WilcoxonResult test(std::span<const double> differences);
  static WilcoxonResult test(std::span<const double> x, std::span<const double> y);

  // The smallest two-sided p-value the exact test can give with n non-zero pairs: 2 / 2^n.
  // Below the level it can never be significant (n < 6 at 0.05).
  static double smallestPValue(int n);
};

}  // namespace kvscope
