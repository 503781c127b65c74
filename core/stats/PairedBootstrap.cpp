#include "core/stats/PairedBootstrap.h"

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

BootstrapInterval PairedBootstrap::interval(std::span<const double> differences, double confidence, int resamples,
                                            std::uint64_t seed) {
  BootstrapInterval r;
  r.n = static_cast<int>(differences.size());
  r.resamples = resamples;
  if (differences.empty() || resamples <= 0) return r;
  double sum = 0;
  for (double d : differences) sum += d;
  const double n = static_cast<double>(differences.size());
  r.mean_difference = sum / n;
  r.ci_low = r.ci_high = r.mean_difference;
  if (std::all_of(differences.begin(), differences.end(), [&](double d) { return d == differences[0]; }))
    return r;  // every resample is the same: the interval is a point
  std::mt19937_64 rng(seed);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (auto& m : means) {
    double s = 0;
    for (std::size_t i = 0; i < differences.size(); ++i) s += differences[uniformIndex(rng, differences.size())];
    m = s / n;
  }
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
