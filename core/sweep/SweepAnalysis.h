#pragma once
// The numbers behind a sweep's tables: per grid point and metric, the mean with its 95% interval
// across seeds (log scale: the metrics are never negative, nor are their intervals), the change
// against the baseline point in percent, and the paired comparison on the seeds
// both points ran; per point and decode worker, the mean bindings, share and unique sessions.
#include <optional>
#include <string>
#include <vector>

#include "core/stats/MeanInterval.h"
#include "core/stats/PairedComparison.h"
#include "core/sweep/SweepData.h"
#include "core/sweep/SweepMetric.h"

namespace kvscope {

struct MetricCell {
  std::vector<double> values;  // one per seed that has the value, in seed order
  MeanInterval interval;
  std::optional<double> change_pct;            // (mean - baseline mean) / |baseline mean|; none at the baseline
  std::optional<PairedComparison> comparison;  // none at the baseline and for unpaired data
};

struct WorkerCell {
  double bindings = 0, share = 0, sessions = 0;  // means across seeds
  bool present = false;
};

struct SweepAnalysis {
  std::vector<SweepMetric> metrics;
  std::vector<std::string> worker_ids;           // decode workers, in the order the runs list them
  std::vector<std::vector<MetricCell>> cells;    // [point][metric]
  std::vector<std::vector<WorkerCell>> workers;  // [point][worker]
  std::vector<std::size_t> runs_done;            // [point]: seeds with a summary
  // When the only thing that varies is the policy, between exactly two values: the other point
  // (the baseline is the first). The lab's "LMetric vs Unified" table.
  std::optional<std::size_t> two_policy_other;

  static SweepAnalysis of(const SweepData& data);
  std::size_t metricIndex(const std::string& key) const;  // metrics.size() when unknown
};

}  // namespace kvscope
