#pragma once
// `calibrate fit`: the scenario parameters (FitParameter) that make the twin reproduce a target's
// measured metrics. Every candidate runs every target row on the same seeds (CandidateRuns), its
// objective is the sum of squared errors (MetricErrors), and NLopt's derivative-free local search
// (Nelder-Mead by default; Subplex or BOBYQA on request) moves within the given ranges, in
// coordinates scaled to [0, 1] so a range of sessions and a range of a scale weigh alike. It starts
// from the scenario's own values (clamped into the ranges). After the search, each parameter is
// stepped +10% (or -10% at the top of its range) to show what it moves: a parameter that moves no
// metric is flagged, its fitted value means nothing.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/calibration/CalibrationTarget.h"
#include "core/calibration/CandidateRuns.h"
#include "core/calibration/FitParameter.h"
#include "core/calibration/MetricErrors.h"

namespace kvscope {

struct FitOptions {
  std::vector<FitParameter> params;
  std::vector<std::uint64_t> seeds;
  std::optional<double> duration_s;
  unsigned jobs = 0;
  int max_evaluations = 40;
  std::string algorithm = "neldermead";  // neldermead | sbplx | bobyqa
  bool sensitivity = true;
};

struct FitProgress {
  std::string phase;    // "fit" or "sensitivity"
  int evaluations = 0;  // objective evaluations done (the search's and the sensitivity steps)
  int budget = 0;       // the most there will be
  double current = 0;   // fraction of the running evaluation's simulations done
  std::optional<double> best_objective;
  double elapsed_s = 0;
  std::optional<double> eta_s;
};

struct ParameterSensitivity {
  std::string param;
  double from = 0, to = 0;  // the fitted value and the stepped one
  struct Change {
    std::string row, metric;
    double change = 0;  // relative change of the metric (share points for a share)
  };
  std::vector<Change> changes;
  double largest = 0;      // max |change|
  bool no_effect = false;  // largest < 0.001
};

struct FitResult {
  std::vector<double> start, values;  // per parameter, as written (integers rounded)
  double objective = 0;
  std::vector<MetricError> errors;
  int evaluations = 0;         // objective evaluations of the search
  int simulated = 0;           // distinct candidates actually simulated (repeats are cached)
  bool stopped_early = false;  // cancelled: values are the best found so far
  std::string stop_reason;     // NLopt's result, or "interrupted"
  std::vector<ParameterSensitivity> sensitivity;
};

class ScenarioFitter {
 public:
  // Loads the scenario (bundled name or file), checks every parameter applies to it and every target
  // row runs on it. Throws InputError.
  ScenarioFitter(const std::string& scenario, CalibrationTarget target, FitOptions options);

  // The search, then the sensitivity (skipped when cancelled). `progress` is called from worker
  // threads, serialised. Throws InputError when a run fails.
  FitResult run(const std::atomic<bool>& cancel, const std::function<void(const FitProgress&)>& progress = {});

  // The base scenario's JSON with `values` applied, named `name`, the duration the fit ran, and a
  // "calibration" object: target, parameters (range, start, value), per-metric errors, seeds,
  // evaluations, sensitivity.
  nlohmann::json calibratedScenario(const FitResult& result, const std::string& name) const;

  const CalibrationTarget& target() const { return target_; }
  const FitOptions& options() const { return options_; }
  const std::string& scenarioFile() const { return file_; }

  // The scenario JSON with parameter values applied, and the scenario it loads as.
  nlohmann::json candidateJson(const std::vector<double>& values) const;
  Scenario candidate(const std::vector<double>& values) const;

 private:
  std::string file_;
  nlohmann::json base_;
  CalibrationTarget target_;
  FitOptions options_;
};

}  // namespace kvscope
