#pragma once
// Runs every row of a calibration target (a policy, with its knobs) on one scenario for the same
// list of seeds, in parallel: seed i of every row and every candidate scenario is the same workload,
// so candidates are compared on paired runs and a fit's objective is deterministic.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/calibration/CalibrationTarget.h"
#include "core/scenario/Scenario.h"

namespace kvscope {

// What one row's runs gave, per seed (in seed order).
struct RowRuns {
  std::string label;
  std::vector<RunSummary> runs;
  // The metric of every seed; empty when a seed's run has none (token_imbalance with an idle worker).
  std::vector<double> metric(const std::string& name) const;
  // Decode share of worker `d` in every seed's run (0 when the run has fewer decode workers).
  std::vector<double> share(std::size_t d) const;
};

// Thrown out of run() when `cancel` was set: no partial result is returned.
struct RunsCancelled {};

class CandidateRuns {
 public:
  CandidateRuns(std::vector<std::uint64_t> seeds, std::optional<double> duration_s, unsigned jobs)
      : seeds_(std::move(seeds)), duration_s_(duration_s), jobs_(jobs) {}

  // Rows x seeds runs of `scenario`; `progress` gets the fraction done (any thread, serialised).
  // Throws RunsCancelled when `cancel` turns true, InputError when a run cannot start.
  std::vector<RowRuns> run(const Scenario& scenario, const std::vector<TargetRow>& rows,
                           const std::atomic<bool>& cancel, const std::function<void(double)>& progress = {}) const;

  const std::vector<std::uint64_t>& seeds() const { return seeds_; }
  std::optional<double> duration() const { return duration_s_; }

 private:
  std::vector<std::uint64_t> seeds_;
  std::optional<double> duration_s_;
  unsigned jobs_;
};

double meanOf(const std::vector<double>& v);

}  // namespace kvscope
