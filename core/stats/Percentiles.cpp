#include "core/stats/Percentiles.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kvscope {

double percentileSorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

SampleSummary summarise(std::vector<double>& values) {
  SampleSummary d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  d.p50 = percentileSorted(values, 50);
  d.p90 = percentileSorted(values, 90);
  d.p99 = percentileSorted(values, 99);
  return d;
}

}  // namespace kvscope
