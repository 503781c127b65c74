#include "core/calibration/MetricErrors.h"

#include <cmath>
#include <limits>

namespace kvscope {

namespace {
// A run without the metric (or a zero latency) is as bad as being e^5 = 150x off, finite so the
// optimizer can still compare candidates.
constexpr double kMissingPenalty = 5.0;
}  // namespace

double MetricError::relative() const { return share ? predicted - measured : predicted / measured - 1; }

std::vector<MetricError> metricErrors(const CalibrationTarget& target, const std::vector<RowRuns>& runs) {
  std::vector<MetricError> out;
  for (std::size_t r = 0; r < target.rows.size(); ++r) {
    const TargetRow& row = target.rows[r];
    for (const auto& [metric, measured] : row.metrics) {
      MetricError e{row.label, metric, measured, std::numeric_limits<double>::quiet_NaN(), kMissingPenalty, false};
      const auto values = runs[r].metric(metric);
      if (!values.empty()) {
        e.predicted = meanOf(values);
        if (e.predicted > 0) e.error = std::log(e.predicted / measured);
      }
      out.push_back(e);
    }
    for (std::size_t d = 0; d < row.decode_shares.size(); ++d) {
      MetricError e{
          row.label, "decode_share[" + std::to_string(d) + "]", row.decode_shares[d], meanOf(runs[r].share(d)), 0,
          true};
      e.error = e.predicted - e.measured;
      out.push_back(e);
    }
  }
  return out;
}

double objectiveOf(const std::vector<MetricError>& errors) {
  double sum = 0;
  for (const auto& e : errors) sum += e.error * e.error;
  return sum;
}

}  // namespace kvscope
