// `kvscope-cli calibrate fit`: the scenario parameters that make the twin reproduce measured
// metrics (ScenarioFitter), written as a loadable scenario with a "calibration" record.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "app/cli/CalibrateCommands.h"
#include "app/cli/ProgressLoop.h"
#include "app/cli/RunOptions.h"
#include "core/calibration/CalibrationTarget.h"
#include "core/calibration/ScenarioFitter.h"
#include "core/io/AtomicFile.h"
#include "core/model/Error.h"
#include "core/model/NumberText.h"
#include "core/sweep/SweepSpec.h"

namespace kvscope::cli {

using nlohmann::json;

namespace {

std::string joinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

struct FitArgs {
  std::string scenario;
  std::string target;
  std::vector<std::string> fits;
  std::string seeds = "3";
  std::optional<double> duration;
  unsigned jobs = 0;
  int evaluations = 40;
  std::string algorithm = "neldermead";
  std::string name;
  std::string out;
  bool no_sensitivity = false;
  bool quiet = false;
};

std::string progressLine(const FitProgress& p) {
  const std::string best = p.best_objective ? formatNumber("%.4g", *p.best_objective) : "--";
  return "calibrate fit: " + std::to_string(p.evaluations) + "/" + std::to_string(p.budget) + " evaluations (" +
         p.phase + ", best objective " + best + ", current " + formatNumber("%.0f%%", 100 * p.current) + ")  elapsed " +
         clockText(p.elapsed_s) + "  ETA " + (p.eta_s ? clockText(*p.eta_s) : "--:--");
}

std::string errorText(const MetricError& e) {
  if (!std::isfinite(e.predicted)) return "n/a";
  return e.share ? formatNumber("%+.1f pts", 100 * e.relative()) : formatNumber("%+.1f%%", 100 * e.relative());
}

void printResult(const ScenarioFitter& fitter, const FitResult& r) {
  const auto& o = fitter.options();
  std::printf("fitted parameters:\n");
  for (std::size_t i = 0; i < o.params.size(); ++i)
    std::printf("  %-20s = %-10.4g (range [%g, %g], start %g)\n", o.params[i].name.c_str(), r.values[i], o.params[i].lo,
                o.params[i].hi, r.start[i]);
  std::printf(
      "\ntarget vs fitted (fitted = mean over %zu seeds; error = fitted / target - 1; shares in %%, their errors in "
      "percentage points):\n",
      o.seeds.size());
  std::printf("%-12s %-18s %12s %12s %12s\n", "row", "metric", "target", "fitted", "error");
  for (const auto& e : r.errors) {
    const char* f = e.share ? "%.1f%%" : "%.3f";  // shares in %, their errors in percentage points
    const double k = e.share ? 100 : 1;
    std::printf("%-12s %-18s %12s %12s %12s\n", e.row.c_str(), e.metric.c_str(),
                formatNumber(f, k * e.measured).c_str(),
                std::isfinite(e.predicted) ? formatNumber(f, k * e.predicted).c_str() : "n/a", errorText(e).c_str());
  }
  std::printf(
      "\nobjective (sum of squared log ratios and share differences): %.5g after %d evaluations (%d simulated); %s\n",
      r.objective, r.evaluations, r.simulated, r.stop_reason.c_str());
  if (!r.sensitivity.empty()) {
    std::printf("\nsensitivity (each parameter stepped from the fit, the others kept; change of each metric):\n");
    for (const auto& s : r.sensitivity) {
      const std::string step =
          s.from != 0 ? formatNumber("%+.0f%%", 100 * (s.to / s.from - 1)) : "a tenth of the range from 0";
      std::printf("  %s %g -> %g (%s):", s.param.c_str(), s.from, s.to, step.c_str());
      for (const auto& c : s.changes) {
        const bool share = c.metric.rfind("decode_share", 0) == 0;
        std::printf(" %s.%s %s", c.row.c_str(), c.metric.c_str(),
                    share ? formatNumber("%+.1f pts", 100 * c.change).c_str()
                          : formatNumber("%+.1f%%", 100 * c.change).c_str());
      }
      std::printf("\n");
    }
  }
}

FitOptions fitOptionsFrom(const FitArgs& a) {
  FitOptions o;
  for (const auto& f : a.fits) o.params.push_back(FitParameter::parse(f));
  try {
    o.seeds = SweepSpec::parseSeeds(a.seeds);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()));  // a bad --seeds is a bad input here (exit 1), as it was
  }
  o.duration_s = a.duration;
  o.jobs = a.jobs;
  o.max_evaluations = a.evaluations;
  o.algorithm = a.algorithm;
  o.sensitivity = !a.no_sensitivity;
  return o;
}

// --name, else the output file's name without ".json".
std::string scenarioName(const FitArgs& a) {
  if (!a.name.empty()) return a.name;
  std::string name = std::filesystem::path(a.out).filename().string();
  if (name.size() > 5 && name.ends_with(".json")) name.resize(name.size() - 5);
  return name;
}

// The calibrated scenario, loadable as any scenario file, with a comment saying where it came from.
void writeCalibratedScenario(const json& scenario, const CalibrationTarget& target, const std::string& out) {
  std::string source = target.source;  // on one comment line
  std::replace(source.begin(), source.end(), '\n', ' ');
  const std::string text =
      "// Calibrated by `kvscope-cli calibrate fit` from " +
      scenario["calibration"]["base_scenario"].get<std::string>() +
      (source.empty() ? std::string() : " to: " + source) +
      ".\n// The \"calibration\" object holds the target, the fitted parameters, the errors and the seeds.\n" +
      scenario.dump(2) + "\n";
  std::string error;
  if (!AtomicFile::write(out, text, &error)) throw InputError(error);
}

}  // namespace

Command addCalibrateFit(CLI::App& calibrate) {
  auto a = std::make_shared<FitArgs>();
  auto* sub = calibrate.add_subcommand(
      "fit", "Find the scenario parameters that reproduce measured metrics (NLopt, paired seeds)");
  sub->footer(
      "Every candidate runs each policy of the target on the same seeds (paired, so the search is deterministic);\n"
      "the objective is the sum of squared log ratios predicted/measured (differences for decode shares), searched\n"
      "by NLopt's derivative-free methods within the --fit ranges. Prints target vs fitted per metric, the parameters\n"
      "and each one's sensitivity, and writes a loadable scenario with a \"calibration\" record. Ctrl+C stops and\n"
      "writes the best point so far.\n"
      "  kvscope-cli calibrate fit --scenario lab-8c --target resources/calibration/lab-004-fit.target.json \\\n"
      "      --fit start_window_s=300:7200 --fit sessions=300:900 --seeds 10 -o lab-004.json");
  sub->add_option("--scenario", a->scenario, "The scenario to fit (bundled name or file)")->required();
  sub->add_option("--target", a->target,
                  "The measured metrics: {\"source\": ..., \"policies\": {POLICY: {METRIC: VALUE, ...}}} (metrics: " +
                      joinNames(CalibrationTarget::metricNames()) +
                      ", decode_shares [..]; a row may say \"policy\" and \"knobs\"), or the JSON of "
                      "`kvscope-cli report --format json`")
      ->required();
  sub->add_option("--fit", a->fits, "NAME=LO:HI, repeatable. NAME: " + FitParameter::describeAll())->required();
  sub->add_option("--seeds", a->seeds,
                  "N (seeds 1..N) or a list 3,7,11: every candidate runs every policy on these (default 3)");
  sub->add_option("--duration", a->duration,
                  "Simulated seconds of every run (default: the scenario's); written into the result")
      ->check(CLI::Range(1.0, 2.6e6).description("in [1, 30 days]"));
  sub->add_option("--jobs,-j", a->jobs, "Runs at once (default: the number of cores)")
      ->check(CLI::Range(1u, 1024u).description("in [1, 1024]"));
  sub->add_option("--evaluations", a->evaluations, "Budget of the search, in objective evaluations (default 40)")
      ->check(CLI::Range(1, 100000).description("in [1, 100000]"));
  sub->add_option("--algorithm", a->algorithm, "NLopt local search: neldermead (default), sbplx or bobyqa")
      ->check(CLI::IsMember({"neldermead", "sbplx", "bobyqa"}));
  sub->add_option("--name", a->name, "The calibrated scenario's name (default: the output file's name without .json)");
  sub->add_option("--out,-o", a->out, "The calibrated scenario to write (e.g. S.calibrated.json)")->required();
  sub->add_flag("--no-sensitivity", a->no_sensitivity, "Skip the sensitivity steps after the search");
  sub->add_flag("--quiet", a->quiet, "No progress line");
  return [a] {
    checkOutputFile("--out", a->out);
    const CalibrationTarget target = CalibrationTarget::load(a->target);
    const FitOptions o = fitOptionsFrom(*a);
    ScenarioFitter fitter(a->scenario, target, o);  // validates everything before any run
    const std::string name = scenarioName(*a);
    std::printf(
        "calibrate fit: scenario %s against %s%s: %zu rows x %zu seeds per evaluation, duration %s, %s, "
        "budget %d evaluations\n",
        fitter.scenarioFile().c_str(), target.file.c_str(),
        target.source.empty() ? "" : (" (" + target.source + ")").c_str(), target.rows.size(), o.seeds.size(),
        a->duration ? formatNumber("%g s", *a->duration).c_str() : "the scenario's", o.algorithm.c_str(),
        o.max_evaluations);
    std::fflush(stdout);

    FitResult result;
    ProgressLoop loop;
    loop.quiet = a->quiet;
    loop.stopping = "stopping the search; the best point so far will be written";
    loop.run([&](const std::atomic<bool>& cancel) {
      result = fitter.run(cancel, [&](const FitProgress& p) { loop.post(progressLine(p)); });
    });
    if (result.errors.empty()) {
      std::fprintf(stderr,
                   "kvscope-cli: calibrate fit interrupted before the first evaluation finished; wrote nothing\n");
      return 130;
    }
    if (result.stopped_early)
      std::printf("stopped early (%s) after %d evaluations: the values below are the best found so far%s\n",
                  result.stop_reason.c_str(), result.evaluations,
                  result.sensitivity.size() < o.params.size() ? "; sensitivity not computed for every parameter" : "");
    printResult(fitter, result);
    for (const auto& s : result.sensitivity)
      if (s.no_effect)
        std::fprintf(stderr,
                     "kvscope-cli: warning: %s has no effect on any target metric (largest change %.2g%% for a step "
                     "%g -> %g): its fitted value is arbitrary; drop it from --fit\n",
                     s.param.c_str(), 100 * s.largest, s.from, s.to);
    writeCalibratedScenario(fitter.calibratedScenario(result, name), target, a->out);
    std::printf("\nwrote %s (scenario \"%s\")\n", a->out.c_str(), name.c_str());
    return result.stopped_early ? 130 : 0;
  };
}

}  // namespace kvscope::cli
