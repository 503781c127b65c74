#include "stats/PairedBootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace kvscope {

namespace {
// An index in [0, n) from the 64-bit engine by rejection: std::uniform_int_distribution's mapping is
// not specified by the standard, and the answer must not change with the library.
std::size_t uniformIndex(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t v;
  do v = rng();
  while (v >= limit);
  return static_cast<std::size_t>(v % n);
}
}  // namespace

BootstrapResult PairedBootstrap::test(std::span<const double> differences, double confidence, int resamples,
                                      std::uint64_t seed) {
  BootstrapResult r;
  r.n = static_cast<int>(differences.size());
  r.resamples = resamples;
  if (differences.empty() || resamples <= 0) return r;
  double sum = 0;
  for (double d : differences) sum += d;
  const double n = static_cast<double>(differences.size());
  r.mean_difference = sum / n;
  r.ci_low = r.ci_high = r.mean_difference;
  const bool constant = std::all_of(differences.begin(), differences.end(), [&](double d) { return d == differences[0]; });
  if (constant) {
    // Every resample is the same: the interval is a point, and only a zero difference is "no difference".
    r.p_value = r.mean_difference == 0 ? 1.0 : 1.0 / (resamples + 1);
    return r;
  }
  std::mt19937_64 rng(seed);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  int extreme = 0;
  const double observed = std::abs(r.mean_difference);
  for (auto& m : means) {
    double s = 0;
    for (std::size_t i = 0; i < differences.size(); ++i) s += differences[uniformIndex(rng, differences.size())];
    m = s / n;
    // Shifted to the null (mean zero): is it at least as far from zero as what was observed?
    if (std::abs(m - r.mean_difference) >= observed - 1e-12 * std::max(1.0, observed)) ++extreme;
  }
  r.p_value = std::min(1.0, (extreme + 1.0) / (resamples + 1.0));
  std::sort(means.begin(), means.end());
  const double alpha = (1 - confidence) / 2;
  auto at = [&](double q) {
    const double pos = q * (static_cast<double>(means.size()) - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, means.size() - 1);
    return means[lo] + (pos - static_cast<double>(lo)) * (means[hi] - means[lo]);
  };
  r.ci_low = at(alpha);
  r.ci_high = at(1 - alpha);
  return r;
}

}  // namespace kvscope
