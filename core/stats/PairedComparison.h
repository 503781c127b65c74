#pragma once
// One metric, baseline against candidate, over the same seeds: which test, its p-value, the verdict.
//
// The choice, in order:
// - fewer than kMinPairs pairs: "too few seeds" (no test; a bootstrap of 2 pairs has 3 outcomes);
// - the Wilcoxon signed-rank test when it can reach the level with the non-zero pairs there are
//   (2/2^n <= level, so n >= 6 at 0.05);
// - otherwise the paired bootstrap of the mean difference (PairedBootstrap), which the tables name
//   so that a reader knows the verdict rests on 3-5 seeds.
#include <span>
#include <string_view>

#include "stats/Verdict.h"

namespace kvscope {

enum class PairedTest { None, WilcoxonExact, WilcoxonNormal, Bootstrap };
std::string_view toString(PairedTest t);

struct PairedComparison {
  static constexpr int kMinPairs = 3;

  int pairs = 0;
  double mean_difference = 0;  // candidate - baseline
  PairedTest test = PairedTest::None;
  double p_value = 1;          // NaN when no test was run
  double level = 0.05;
  Verdict verdict = Verdict::TooFewSeeds;

  // baseline[i] and candidate[i] come from the same seed.
  static PairedComparison compare(std::span<const double> baseline, std::span<const double> candidate, double level);
};

}  // namespace kvscope
