#pragma once
// Summary statistics of a sample: mean and linearly interpolated percentiles (numpy's default).
#include <span>
#include <vector>

namespace kvscope {

struct SampleSummary {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
  std::size_t count = 0;
};

// Percentile q in [0, 100] of an ascending-sorted sample (linear interpolation); 0 when empty.
double percentileSorted(std::span<const double> sorted, double q);
// Summarises `values`, reordering them (a partial sort: they are not left sorted).
SampleSummary summarise(std::vector<double>& values);

}  // namespace kvscope
