#pragma once
// One metric, baseline against candidate, over the same seeds: what the seeds let us claim, and
// nothing more. The small API every report uses (sweep, compare, the Sweep window) and the one a
// `calibrate check` calls: compare() on the per-seed values of two policies or knob settings,
// summary() for the line it prints, and MeanInterval::ofPositive for a prediction's seed spread.
//
// - The verdict rests on the exact sign-flip test of the paired differences (SignFlipTest: all 2^n
//   sign patterns up to 20 differing pairs, a fixed-seed sample of 100,000 beyond). Its smallest
//   possible p with n differing pairs is 2/2^n; when that is not below the level no outcome could be
//   significant, and the verdict is "needs >= k seeds" (k = SignFlipTest::pairsNeeded(level): 6 at
//   0.05) whatever the data say. Zero differences (ties) are dropped first, as scipy's default
//   zero_method="wilcox" does; when every pair is tied the verdict is "not significant" with p = 1.
// - The Wilcoxon signed-rank p on the same pairs is reported beside it (robust to one wild seed;
//   same 2/2^n floor); it does not change the verdict.
// - With at least PairedBootstrap::kMinPairs pairs, a percentile bootstrap interval of the mean
//   difference; fewer: none (the bootstrap's intervals are too narrow there).
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/stats/PairedBootstrap.h"
#include "core/stats/Verdict.h"

namespace kvscope {

enum class PairedTest { None, SignFlipExact, SignFlipSampled };
std::string_view toString(PairedTest t);

struct PairedComparison {
  int pairs = 0;      // seeds both sides ran
  int differing = 0;  // pairs whose difference is not 0: the n of the tests
  // Seeds whose runs were the same on both sides (a recorded workload and a policy with no random
  // draw replay identically): counted once, since repeating a run adds no evidence. 0: none were.
  int replicated_seeds = 0;
  double mean_difference = 0;  // candidate - baseline, over every pair
  PairedTest test = PairedTest::None;
  double p_value = 1;     // the sign-flip test's
  double smallest_p = 1;  // 2/2^differing: the lowest p these pairs could give
  double wilcoxon_p = 1;
  bool wilcoxon_exact = true;
  double level = 0.05;
  int seeds_needed = 0;  // differing pairs any verdict needs at this level
  Verdict verdict = Verdict::NeedsMoreSeeds;
  std::optional<BootstrapInterval> difference_ci;  // only with >= PairedBootstrap::kMinPairs pairs

  // baseline[i] and candidate[i] come from the same seed.
  static PairedComparison compare(std::span<const double> baseline, std::span<const double> candidate, double level);

  // "significant", "not significant", "needs >= 6 seeds".
  std::string verdictText() const;
  // "sign-flip (exact, 8 patterns)" / "sign-flip (100000 sampled patterns, seed 20240601)".
  std::string testText() const;
  // One line with everything: "n=3 pairs, sign-flip (exact, 8 patterns): p=0.25 (smallest possible
  // 0.25 with 3 pairs), Wilcoxon p=0.25 -> needs >= 6 seeds at level 0.05".
  std::string summary() const;
};

}  // namespace kvscope
