#pragma once
// A stream of latencies (seconds) summarised as mean and p50/p90/p99.
//
// Exact while it holds at most `exact_limit` values: every finite run the lab makes fits (the whole
// Mooncake conversation trace is 11,801 requests), so `simulate`, `report` and sweeps print exact
// numpy-style percentiles. Past the limit the values fold into a log-bucketed histogram (each bucket
// 0.2% wide, so a percentile is within 0.1% of the exact one) and memory stops growing: a console
// watching a live cluster for days stays bounded. The mean, count, min and max stay exact.
// (No C++ quantile sketch is packaged in Debian; this is DDSketch's bucket scheme, kept small.)
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/stats/Percentiles.h"

namespace kvscope {

class LatencySample {
 public:
  static constexpr std::size_t kDefaultExactLimit = std::size_t{1} << 18;

  LatencySample() = default;
  explicit LatencySample(std::size_t exact_limit) : exact_limit_(exact_limit) {}

  void add(double seconds);
  // Not thread-safe even though const: it sorts the values added since the last call, in place.
  SampleSummary summary() const;
  // Percentile q in [0, 100], as summary() computes its p50/p90/p99 (0 when empty). Not thread-safe.
  double quantile(double q) const;
  bool exact() const { return buckets_.empty(); }
  std::size_t count() const { return count_; }
  std::size_t memoryBytes() const;
  void clear();

  // The bucket scheme, public for its tests: values in (kMinValue, kMaxValue] are kept to within
  // kRelativeError; smaller ones count as the smallest value seen, larger ones as the largest.
  static constexpr double kMinValue = 1e-6, kMaxValue = 1e6, kRelativeError = 0.001;

 private:
  void foldIntoHistogram();
  void addToHistogram(double v);
  double valueAtRank(std::uint64_t rank) const;  // histogram mode: the rank-th smallest (0-based)

  std::size_t exact_limit_ = kDefaultExactLimit;
  mutable std::vector<double> values_;  // exact mode
  mutable std::size_t sorted_ = 0;      // values_[0, sorted_) is ascending
  std::vector<std::uint64_t> buckets_;  // histogram mode (empty while exact)
  std::size_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

}  // namespace kvscope
