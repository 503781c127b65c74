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

namespace {
// percentileSorted() without the sort: nth_element puts the two neighbours of q's position in
// place. Everything before `placed` is already no larger than the rest (a lower percentile's
// work), so each call partitions only what is left: O(n) for the three, not O(n log n).
double percentileSelect(std::vector<double>& values, std::size_t& placed, double q) {
  const double pos = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  if (lo >= placed)
    std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(placed),
                     values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  placed = lo;
  const double low = values[lo];
  const double high = lo + 1 < values.size()
                          ? *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end())
                          : low;
  return low + (high - low) * (pos - static_cast<double>(lo));
}
}  // namespace

SampleSummary summarise(std::vector<double>& values) {
  SampleSummary d;
  d.count = values.size();
  if (values.empty()) return d;
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  std::size_t placed = 0;
  d.p50 = percentileSelect(values, placed, 50);
  d.p90 = percentileSelect(values, placed, 90);
  d.p99 = percentileSelect(values, placed, 99);
  return d;
}

}  // namespace kvscope
