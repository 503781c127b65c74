#include "core/stats/PairedComparison.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "core/model/NumberText.h"
#include "core/stats/SignFlipTest.h"
#include "core/stats/WilcoxonSignedRank.h"

namespace kvscope {

std::string_view toString(PairedTest t) {
  switch (t) {
    case PairedTest::None:
      return "none";
    case PairedTest::SignFlipExact:
      return "sign-flip (exact)";
    case PairedTest::SignFlipSampled:
      return "sign-flip (sampled)";
  }
  return "?";
}

PairedComparison PairedComparison::compare(std::span<const double> baseline, std::span<const double> candidate,
                                           double level) {
  if (baseline.size() != candidate.size()) throw std::invalid_argument("paired comparison: samples of different sizes");
  PairedComparison c;
  c.level = level;
  c.pairs = static_cast<int>(baseline.size());
  c.seeds_needed = SignFlipTest::pairsNeeded(level);
  std::vector<double> d(baseline.size());
  double sum = 0;
  for (std::size_t i = 0; i < d.size(); ++i) sum += d[i] = candidate[i] - baseline[i];
  c.mean_difference = d.empty() ? 0 : sum / static_cast<double>(d.size());

  const SignFlipResult s = SignFlipTest::test(d);
  c.differing = s.n;
  c.p_value = s.p_value;
  c.smallest_p = SignFlipTest::smallestPValue(s.n);
  if (s.n > 0) c.test = s.exact ? PairedTest::SignFlipExact : PairedTest::SignFlipSampled;
  const WilcoxonResult w = WilcoxonSignedRank::test(d);
  c.wilcoxon_p = w.p_value;
  c.wilcoxon_exact = w.exact || w.n == 0;
  if (c.pairs >= PairedBootstrap::kMinPairs) c.difference_ci = PairedBootstrap::interval(d);

  if (s.n == 0 && c.pairs > 0)
    c.verdict = Verdict::NotSignificant;  // every pair tied: no difference seen
  else if (c.smallest_p >= level)
    c.verdict = Verdict::NeedsMoreSeeds;
  else
    c.verdict = c.p_value < level ? Verdict::Significant : Verdict::NotSignificant;
  return c;
}

std::string PairedComparison::verdictText() const {
  if (replicated_seeds > 0 && verdict == Verdict::NeedsMoreSeeds)
    return "the " + std::to_string(replicated_seeds) + " seeds gave the same runs: n = 1";
  if (verdict != Verdict::NeedsMoreSeeds) return std::string(toString(verdict));
  // A metric one side never has (token imbalance with an idle worker): no pair to test at all.
  if (pairs == 0) return "no pairs (a side has no value)";
  std::string t = "needs >= " + std::to_string(seeds_needed) + " seeds";
  if (differing < pairs) t += " that differ (" + std::to_string(differing) + " of " + std::to_string(pairs) + " do)";
  return t;
}

std::string PairedComparison::testText() const {
  switch (test) {
    case PairedTest::None:
      return "none";
    case PairedTest::SignFlipExact:
      return "sign-flip (exact, " + std::to_string(1LL << differing) + " patterns)";
    case PairedTest::SignFlipSampled:
      return "sign-flip (" + std::to_string(SignFlipTest::kSamples) + " sampled patterns, seed " +
             std::to_string(SignFlipTest::kSeed) + ")";
  }
  return "?";
}

std::string PairedComparison::summary() const {
  std::string out = "n=" + std::to_string(pairs) + " pairs";
  if (differing < pairs) out += " (" + std::to_string(differing) + " differ)";
  if (pairs == 0) return out + " -> " + verdictText();
  if (test == PairedTest::None) return out + ": no pair differs -> " + verdictText();
  out += ", " + testText() + ": p=" + pValueText(p_value) + " (smallest possible " + pValueText(smallest_p) + " with " +
         std::to_string(differing) + " pairs), Wilcoxon p=" + pValueText(wilcoxon_p) +
         (wilcoxon_exact ? "" : " (normal approx.)");
  char lv[32];
  std::snprintf(lv, sizeof lv, "%g", level);
  return out + " -> " + verdictText() + " at level " + lv;
}

}  // namespace kvscope
