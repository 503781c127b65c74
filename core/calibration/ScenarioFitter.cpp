#include "core/calibration/ScenarioFitter.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

#include <nlopt.h>

#include "core/model/Error.h"
#include "core/run/SimulationRun.h"

namespace kvscope {

using nlohmann::json;

namespace {

nlopt_algorithm algorithmOf(const std::string& name) {
  if (name == "neldermead") return NLOPT_LN_NELDERMEAD;
  if (name == "sbplx") return NLOPT_LN_SBPLX;
  if (name == "bobyqa") return NLOPT_LN_BOBYQA;
  throw InputError("--algorithm " + name + ": expected neldermead, sbplx or bobyqa");
}

// What the search's callback needs: NLopt is a C library, so nothing may be thrown through it; a
// failure or a cancel is kept here and the search is stopped with nlopt_force_stop.
struct Search {
  nlopt_opt opt = nullptr;
  std::map<std::vector<double>, std::pair<double, std::vector<MetricError>>> cache;  // by values as written
  std::vector<double> best_values;
  double best = std::numeric_limits<double>::infinity();
  std::vector<MetricError> best_errors;
  int evaluations = 0, simulated = 0;
  bool cancelled = false;
  std::exception_ptr failure;
};

// What `progress` is told, serialised (the runs call it from worker threads): the evaluations done
// (the search's and the sensitivity steps), the best objective so far, and an ETA over the budget.
class FitReporter {
 public:
  FitReporter(const std::function<void(const FitProgress&)>& progress, int budget,
              std::chrono::steady_clock::time_point start_time, const Search& search, const FitResult& result)
      : progress_(progress), budget_(budget), start_time_(start_time), search_(search), result_(result) {
    shown_.phase = "fit";
    shown_.budget = budget;
  }
  void report(double current) {
    if (!progress_) return;
    std::lock_guard lock(mutex_);
    shown_.evaluations = search_.evaluations + static_cast<int>(result_.sensitivity.size());
    shown_.current = current;
    if (std::isfinite(search_.best)) shown_.best_objective = search_.best;
    shown_.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
    const double done = shown_.evaluations + current;
    if (done > 0.05) shown_.eta_s = shown_.elapsed_s * (budget_ - done) / done;
    progress_(shown_);
  }
  void setPhase(const char* phase) {
    std::lock_guard lock(mutex_);
    shown_.phase = phase;
  }

 private:
  const std::function<void(const FitProgress&)>& progress_;
  const int budget_;
  const std::chrono::steady_clock::time_point start_time_;
  const Search& search_;
  const FitResult& result_;
  std::mutex mutex_;
  FitProgress shown_;
};

// The search phase: NLopt's local search over u in [0, 1]^n, from `u` (left at the last point it
// tried). `objective(x)` scores a point; what it throws is kept in `search` (cancelled, failure)
// and stops the search, since nothing may be thrown through NLopt.
template <class Objective>
nlopt_result minimise(Search& search, nlopt_algorithm algorithm, int max_evaluations, std::vector<double>& u,
                      Objective& objective) {
  const std::size_t n = u.size();
  struct Ctx {
    Search* s;
    Objective* objective;
  } ctx{&search, &objective};
  auto callback = [](unsigned, const double* x, double*, void* data) -> double {
    auto* c = static_cast<Ctx*>(data);
    Search& s = *c->s;
    try {
      return (*c->objective)(x);
    } catch (const RunsCancelled&) {
      s.cancelled = true;
    } catch (...) {
      s.failure = std::current_exception();
    }
    nlopt_force_stop(s.opt);
    return std::numeric_limits<double>::max();
  };

  search.opt = nlopt_create(algorithm, static_cast<unsigned>(n));
  std::vector<double> lo(n, 0.0), hi(n, 1.0);
  nlopt_set_lower_bounds(search.opt, lo.data());
  nlopt_set_upper_bounds(search.opt, hi.data());
  nlopt_set_min_objective(search.opt, callback, &ctx);
  nlopt_set_maxeval(search.opt, max_evaluations);
  nlopt_set_initial_step1(search.opt, 0.2);  // a fifth of every range
  nlopt_set_xtol_abs1(search.opt, 1e-3);     // a thousandth of every range
  double minf = 0;
  const nlopt_result status = nlopt_optimize(search.opt, u.data(), &minf);
  nlopt_destroy(search.opt);
  return status;
}

// The value a parameter is stepped to from its fitted value `v` to show what it moves: +10% (or
// -10% at the top of its range), by at least 1 where the parameter is rounded to whole numbers.
double steppedValue(const FitParameter& p, double v) {
  double to = v != 0 ? v * 1.1 : v + 0.1 * (p.hi - p.lo);
  if (to > p.hi) to = v * 0.9;
  to = p.effective(to);
  if (to == v) to = p.effective(v + (v + 1 <= p.hi ? 1 : -1));
  return to;
}

// The sensitivity phase: each parameter stepped in turn (steppedValue) and the change of every
// metric against the fit's. Stops early when the runs are cancelled (RunsCancelled propagates).
template <class Evaluate, class Report>
void measureSensitivity(FitResult& result, const std::vector<FitParameter>& params, Evaluate& evaluate,
                        Report& report) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    const FitParameter& p = params[i];
    const double v = result.values[i];
    const double to = steppedValue(p, v);
    std::vector<double> stepped = result.values;
    stepped[i] = to;
    const auto [obj, errors] = evaluate(stepped);
    (void)obj;
    ParameterSensitivity s;
    s.param = p.name;
    s.from = v;
    s.to = to;
    for (std::size_t k = 0; k < errors.size(); ++k) {
      const MetricError& a = result.errors[k];
      const MetricError& b = errors[k];
      double change = a.share ? b.predicted - a.predicted : b.predicted / a.predicted - 1;
      if (!std::isfinite(change)) change = 0;
      s.changes.push_back({a.row, a.metric, change});
      s.largest = std::max(s.largest, std::abs(change));
    }
    s.no_effect = s.largest < 1e-3;
    result.sensitivity.push_back(s);
    report(0);
  }
}

}  // namespace

ScenarioFitter::ScenarioFitter(const std::string& scenario, CalibrationTarget target, FitOptions options)
    : target_(std::move(target)), options_(std::move(options)) {
  file_ = Scenario::resolve(scenario);
  base_ = Scenario::readJson(file_);
  if (options_.params.empty()) throw InputError("calibrate fit: give at least one --fit NAME=LO:HI");
  for (std::size_t i = 0; i < options_.params.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (options_.params[i].name == options_.params[k].name)
        throw InputError("--fit " + options_.params[i].name + ": given twice");
  if (options_.seeds.empty()) throw InputError("--seeds: at least one seed");
  if (options_.max_evaluations < 1) throw InputError("--evaluations: at least 1");
  algorithmOf(options_.algorithm);
  std::vector<double> start;
  for (const auto& p : options_.params) start.push_back(p.current(base_));  // throws when NAME does not apply
  // Every row must prepare on the scenario (policy, knobs) before any work.
  const Scenario s = candidate(start);
  for (const auto& row : target_.rows) {
    SimulationOptions o;
    o.policy = row.policy;
    o.knobs = row.knobs;
    o.duration_s = options_.duration_s;
    prepareRun(s, o);
    if (!row.decode_shares.empty()) {
      const std::size_t workers = static_cast<std::size_t>(s.decode_workers);
      if (row.decode_shares.size() != workers)
        throw InputError(formatInputError(target_.file, 0, "policies." + row.label + ".decode_shares",
                                          "gives " + std::to_string(row.decode_shares.size()) +
                                              " shares; the scenario has " + std::to_string(workers) +
                                              " decode workers"));
    }
  }
}

json ScenarioFitter::candidateJson(const std::vector<double>& values) const {
  json j = base_;
  for (std::size_t i = 0; i < options_.params.size(); ++i) options_.params[i].apply(j, values[i]);
  return j;
}

Scenario ScenarioFitter::candidate(const std::vector<double>& values) const {
  return Scenario::fromJson(candidateJson(values), file_);
}

FitResult ScenarioFitter::run(const std::atomic<bool>& cancel,
                              const std::function<void(const FitProgress&)>& progress) {
  const auto& params = options_.params;
  const std::size_t n = params.size();
  const CandidateRuns runs(options_.seeds, options_.duration_s, options_.jobs);
  const int budget = options_.max_evaluations + (options_.sensitivity ? static_cast<int>(n) : 0);
  const auto start_time = std::chrono::steady_clock::now();

  FitResult result;
  Search search;

  FitReporter reporter(progress, budget, start_time, search, result);
  auto report = [&reporter](double current) { reporter.report(current); };

  // Values as written for normalised coordinates u in [0, 1].
  auto valuesOf = [&](const double* u) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = params[i].effective(params[i].lo + std::clamp(u[i], 0.0, 1.0) * (params[i].hi - params[i].lo));
    return v;
  };
  // One evaluation: cached by the values as written (a rounded parameter repeats candidates).
  auto evaluate = [&](const std::vector<double>& v) -> std::pair<double, std::vector<MetricError>> {
    if (auto it = search.cache.find(v); it != search.cache.end()) return it->second;
    const auto row_runs = runs.run(candidate(v), target_.rows, cancel, report);
    ++search.simulated;
    auto errors = metricErrors(target_, row_runs);
    const double obj = objectiveOf(errors);
    search.cache[v] = {obj, errors};
    return {obj, errors};
  };

  std::vector<double> u(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double c = std::clamp(params[i].current(base_), params[i].lo, params[i].hi);
    u[i] = (c - params[i].lo) / (params[i].hi - params[i].lo);
  }
  result.start = valuesOf(u.data());

  auto objective = [&](const double* x) -> double {
    const std::vector<double> v = valuesOf(x);
    const auto [obj, errors] = evaluate(v);
    ++search.evaluations;
    if (obj < search.best) {
      search.best = obj;
      search.best_values = v;
      search.best_errors = errors;
    }
    report(0);
    return obj;
  };
  const nlopt_result status = minimise(search, algorithmOf(options_.algorithm), options_.max_evaluations, u, objective);
  if (search.failure) std::rethrow_exception(search.failure);

  result.evaluations = search.evaluations;
  result.stopped_early = search.cancelled;
  result.stop_reason = search.cancelled ? "interrupted" : nlopt_result_to_string(status);
  if (search.best_values.empty()) {  // interrupted before the first evaluation finished
    result.values = result.start;
    result.objective = std::numeric_limits<double>::quiet_NaN();
    result.simulated = search.simulated;
    return result;
  }
  result.values = search.best_values;
  result.objective = search.best;
  result.errors = search.best_errors;

  if (options_.sensitivity && !search.cancelled) {
    reporter.setPhase("sensitivity");
    try {
      measureSensitivity(result, params, evaluate, report);
    } catch (const RunsCancelled&) {
      result.stopped_early = true;  // the fit is complete; only the sensitivity is cut short
    }
  }
  result.simulated = search.simulated;
  return result;
}

json ScenarioFitter::calibratedScenario(const FitResult& result, const std::string& name) const {
  json j = candidateJson(result.values);
  j["name"] = name;
  // What a scenario list shows: that this is a fit, and of what.
  j["description"] = "Calibrated " + base_.value("name", std::string("scenario")) + " (calibrate fit" +
                     (target_.source.empty() ? std::string(")") : " to " + target_.source + ")") + ": " +
                     base_.value("description", std::string());
  if (options_.duration_s) j["duration_s"] = *options_.duration_s;
  json cal;
  cal["base_scenario"] = base_.value("name", std::filesystem::path(file_).stem().string());
  cal["target"] = target_.toJson();
  json params = json::object();
  for (std::size_t i = 0; i < options_.params.size(); ++i) {
    const auto& p = options_.params[i];
    params[p.name] = {{"value", result.values[i]}, {"range", {p.lo, p.hi}}, {"start", result.start[i]}};
  }
  cal["parameters"] = params;
  json errors = json::array();
  for (const auto& e : result.errors)
    errors.push_back({{"row", e.row},
                      {"metric", e.metric},
                      {"measured", e.measured},
                      {"predicted", std::isfinite(e.predicted) ? json(e.predicted) : json(nullptr)},
                      {e.share ? "error_share_points" : "relative_error", e.relative()}});
  cal["errors"] = errors;
  cal["objective"] = std::isfinite(result.objective) ? json(result.objective) : json(nullptr);
  cal["seeds"] = options_.seeds;
  cal["duration_s"] = options_.duration_s ? json(*options_.duration_s) : json(base_.value("duration_s", 3600.0));
  cal["algorithm"] = options_.algorithm;
  cal["evaluations"] = result.evaluations;
  cal["evaluation_budget"] = options_.max_evaluations;
  cal["stopped_early"] = result.stopped_early;
  cal["stop_reason"] = result.stop_reason;
  json sens = json::object();
  for (const auto& s : result.sensitivity) {
    json changes = json::object();
    for (const auto& c : s.changes) changes[c.row + "." + c.metric] = c.change;
    sens[s.param] = {{"from", s.from}, {"to", s.to}, {"changes", changes}, {"no_effect", s.no_effect}};
  }
  cal["sensitivity"] = sens;
  j["calibration"] = cal;
  return j;
}

}  // namespace kvscope
