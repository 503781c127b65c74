#pragma once
// `calibrate check`: a calibrated scenario's prediction of measurements it was not fitted to. Every
// target row runs on the scenario for n seeds; per metric the prediction is the mean over seeds with
// its 95% interval on the log scale (MeanInterval::ofPositive: the quantities are positive), beside
// the measured value and the relative error. For a pair of rows (A vs B) the predicted relative
// difference is the mean of the per-seed ratios A_i / B_i - 1 (paired: seed i is the same workload
// for both), with its Student t interval, beside the measured A / B - 1.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/calibration/CalibrationTarget.h"
#include "core/calibration/CandidateRuns.h"
#include "core/stats/MeanInterval.h"

namespace kvscope {

struct CheckedMetric {
  std::string row, metric;
  double measured = 0;
  MeanInterval predicted;  // over seeds; n = 0 when a run had no value
  bool share = false;
  // predicted mean / measured - 1 (metric) or predicted - measured (share points).
  double error() const { return share ? predicted.mean - measured : predicted.mean / measured - 1; }
};

struct CheckedPair {
  std::string a, b, metric;
  double measured = 0;     // A / B - 1
  MeanInterval predicted;  // of A_i / B_i - 1 over seeds (Student t)
};

struct CheckResult {
  std::size_t seeds = 0;
  std::string seed_list;  // "1, 2, 3"
  std::vector<CheckedMetric> metrics;
  std::vector<CheckedPair> pairs;
};

class CalibrationCheck {
 public:
  // `pairs`: (A, B) labels of target rows; throws InputError for a label the target lacks.
  static CheckResult run(const Scenario& scenario, const CalibrationTarget& target,
                         const std::vector<std::pair<std::string, std::string>>& pairs, const CandidateRuns& runs,
                         const std::atomic<bool>& cancel, const std::function<void(double)>& progress = {});
  static std::string table(const CheckResult& result, const std::string& scenario, const CalibrationTarget& target);
};

}  // namespace kvscope
