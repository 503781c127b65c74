#pragma once
// A paired bootstrap of the mean difference, for when there are too few pairs for the Wilcoxon test
// to ever reach the level (2/2^n > level: n < 6 at 0.05). The pairs' differences are resampled with
// replacement `resamples` times from a fixed seed, so the same data always gives the same answer.
//
// p-value: the null is imposed by shifting the differences to mean zero; p is the share of
// resampled means at least as far from zero as the observed mean, (count + 1) / (B + 1) so it is
// never exactly 0. The interval is the percentile interval of the resampled (unshifted) means.
// With 3-5 pairs this is optimistic (the resamples only see the observed values): a verdict from it
// is weaker evidence than a Wilcoxon verdict, and the tables say which test gave it.
#include <cstdint>
#include <span>

namespace kvscope {

struct BootstrapResult {
  int n = 0;
  double mean_difference = 0;
  double ci_low = 0, ci_high = 0;
  double p_value = 1;
  int resamples = 0;
};

class PairedBootstrap {
 public:
  static constexpr std::uint64_t kDefaultSeed = 20240601;
  static constexpr int kDefaultResamples = 10000;

  static BootstrapResult test(std::span<const double> differences, double confidence = 0.95,
                              int resamples = kDefaultResamples, std::uint64_t seed = kDefaultSeed);
};

}  // namespace kvscope
