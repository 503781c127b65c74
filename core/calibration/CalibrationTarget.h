#pragma once
// What a calibration must reproduce: measured metrics per row, a row being a policy (with optional
// knobs) run on the cluster. Read from a small JSON table
//   {"source": "...", "policies": {"linear": {"ttft_p90_s": 16.058, "e2e_p90_s": 52.292}, ...}}
// (a row's key is its label and, unless it says "policy", its policy), or from the JSON that
// `kvscope-cli report --format json` prints for a recorded run (one row, the report's policy).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/metrics/RunSummary.h"

namespace kvscope {

struct TargetRow {
  std::string label;                      // unique in the target; the key in "policies"
  std::string policy;                     // what runs
  std::map<std::string, double> knobs;    // over the scenario's knobs
  std::map<std::string, double> metrics;  // metric name -> measured value (> 0)
  std::vector<double> decode_shares;      // per decode (or unified) worker, in worker order; empty = none
};

struct CalibrationTarget {
  std::string source;  // where the numbers come from (free text)
  std::string file;    // the file it was read from ("A + B" after merge)
  std::vector<TargetRow> rows;

  // The metric names a row may hold: e2e_{mean,p50,p90,p99}_s, ttft_{mean,p50,p90,p99}_s,
  // token_imbalance. Every one is a positive quantity; its error is a log ratio.
  static const std::vector<std::string>& metricNames();
  // The metric of one run; nullopt when the run has none (token_imbalance when a worker served nothing).
  static std::optional<double> metricOf(const RunSummary& run, const std::string& metric);
  // Bindings share of every decode-side worker (role decode or unified), in worker order.
  static std::vector<double> decodeSharesOf(const RunSummary& run);

  // Reads and validates FILE: throws InputError "FILE:LINE: ..." for broken JSON, and naming the
  // field for an unknown policy, metric or knob, a value <= 0, shares outside [0, 1], an empty row.
  static CalibrationTarget load(const std::string& file);
  // One row, "run": what a recorded run measured (TTFT and E2E p50/p90, APC, the slowest worker's
  // TTFT p90, completion, decode shares; the positive ones), for its policy and knobs.
  static CalibrationTarget ofRun(const RunSummary& run, const std::map<std::string, double>& knobs,
                                 const std::string& file, const std::string& source);
  static CalibrationTarget fromJson(const nlohmann::json& j, const std::string& file);
  // The table form (what load() reads back), as the calibrated scenario records it.
  nlohmann::json toJson() const;

  const TargetRow* row(const std::string& label) const;
  // Every row of `other` appended; throws InputError on a label given twice.
  void merge(const CalibrationTarget& other);
};

}  // namespace kvscope
