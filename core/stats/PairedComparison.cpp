#include "stats/PairedComparison.h"

#include <limits>
#include <stdexcept>
#include <vector>

#include "stats/PairedBootstrap.h"
#include "stats/WilcoxonSignedRank.h"

namespace kvscope {

std::string_view toString(PairedTest t) {
  switch (t) {
    case PairedTest::None: return "none";
    case PairedTest::WilcoxonExact: return "wilcoxon (exact)";
    case PairedTest::WilcoxonNormal: return "wilcoxon (normal approx.)";
    case PairedTest::Bootstrap: return "paired bootstrap";
  }
  return "?";
}

PairedComparison PairedComparison::compare(std::span<const double> baseline, std::span<const double> candidate,
                                           double level) {
  if (baseline.size() != candidate.size()) throw std::invalid_argument("paired comparison: samples of different sizes");
  PairedComparison c;
  c.level = level;
  c.pairs = static_cast<int>(baseline.size());
  std::vector<double> d(baseline.size());
  double sum = 0;
  for (std::size_t i = 0; i < d.size(); ++i) sum += d[i] = candidate[i] - baseline[i];
  c.mean_difference = d.empty() ? 0 : sum / static_cast<double>(d.size());
  if (c.pairs < kMinPairs) {
    c.p_value = std::numeric_limits<double>::quiet_NaN();
    c.verdict = Verdict::TooFewSeeds;
    return c;
  }
  const WilcoxonResult w = WilcoxonSignedRank::test(d);
  if (WilcoxonSignedRank::smallestPValue(w.n) <= level) {
    c.test = w.exact ? PairedTest::WilcoxonExact : PairedTest::WilcoxonNormal;
    c.p_value = w.p_value;
  } else {
    c.test = PairedTest::Bootstrap;
    c.p_value = PairedBootstrap::test(d).p_value;
  }
  c.verdict = c.p_value < level ? Verdict::Significant : Verdict::NotSignificant;
  return c;
}

}  // namespace kvscope
