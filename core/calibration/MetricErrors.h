#pragma once
// How far a candidate's runs are from the target: one term per (row, metric) and per decode share.
// A metric's error is the log ratio ln(predicted / measured) (symmetric: 2x too high and 2x too low
// weigh the same; about the relative error when small); a share's error is the difference of the
// two shares (a share may be 0, where a ratio means nothing). The objective is the sum of squares.
#include <string>
#include <vector>

#include "core/calibration/CalibrationTarget.h"
#include "core/calibration/CandidateRuns.h"

namespace kvscope {

struct MetricError {
  std::string row, metric;  // metric "decode_share[1]" for D1's share
  double measured = 0;
  double predicted = 0;  // the mean over seeds; NaN when a seed's run had no value
  double error = 0;      // log ratio, or share difference; a fixed penalty when predicted is missing
  bool share = false;
  // predicted / measured - 1 for a metric, predicted - measured (share points) for a share.
  double relative() const;
};

// Every term of `target` against `runs` (same rows, same order).
std::vector<MetricError> metricErrors(const CalibrationTarget& target, const std::vector<RowRuns>& runs);
double objectiveOf(const std::vector<MetricError>& errors);

}  // namespace kvscope
