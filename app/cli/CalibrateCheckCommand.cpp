// `kvscope-cli calibrate check`: what a (calibrated) scenario predicts for measurements it was not
// fitted to, with the seed-to-seed spread, against the measured values (CalibrationCheck).
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include <filesystem>

#include "app/cli/CalibrateCommands.h"
#include "app/cli/ProgressLoop.h"
#include "backend/recording/RecordingPlayer.h"
#include "backend/recording/RecordingWorkload.h"
#include "core/calibration/CalibrationCheck.h"
#include "core/events/RunChangeCounter.h"
#include "core/metrics/RunAnalysis.h"
#include "core/model/Error.h"
#include "core/model/NumberText.h"
#include "core/run/SimulationRun.h"
#include "core/sweep/SweepSpec.h"

namespace kvscope::cli {

namespace {
struct CheckArgs {
  std::string scenario;
  std::string against;
  std::vector<std::string> targets;
  std::vector<std::string> pairs;
  std::string seeds = "5";
  std::optional<double> duration;
  unsigned jobs = 0;
  bool quiet = false;
};
// --against RUN.kvrec: the run's own measurements as the target (one row, "run", with the policy and
// knobs it started with), and its traffic as the scenario's workload.
struct AgainstRun {
  CalibrationTarget target;
  std::string scenario;  // the recorded scenario's name
  long changes = 0;      // knob or policy changes made during the run
  std::vector<std::string> modelled;
};

AgainstRun readRun(const std::string& path) {
  RecordingPlayer player(path);
  RunAnalysis analysis;
  RunChangeCounter changes;
  RecordingWorkload workload;  // only for what the twin will have to model: one pass over the file
  struct All : EventSink {
    std::vector<EventSink*> sinks;
    void onEvent(const Event& e) override {
      for (EventSink* s : sinks) s->onEvent(e);
    }
  } all;
  all.sinks = {&analysis, &changes, &workload};
  analysis.onEvent(Event{0, 0, player.run()});
  workload.onEvent(Event{0, 0, player.run()});
  player.play(all);
  AgainstRun out;
  std::map<std::string, double> knobs(player.run().knobs.begin(), player.run().knobs.end());
  RunSummary measured = analysis.summary();
  if (measured.policy.empty()) measured.policy = player.run().policy;
  out.target = CalibrationTarget::ofRun(measured, knobs, path, "the run itself");
  out.scenario = player.run().scenario;
  out.changes = changes.changes();
  out.modelled = workload.finish(path).modelled;
  return out;
}

}  // namespace

Command addCalibrateCheck(CLI::App& calibrate) {
  auto a = std::make_shared<CheckArgs>();
  auto* sub = calibrate.add_subcommand(
      "check", "Predict measured metrics with a (calibrated) scenario and print predicted vs measured");
  sub->footer(
      "Runs the target's policies (with their knobs) on the scenario, typically one `calibrate fit` wrote, over n\n"
      "seeds, and prints per metric the prediction (mean over the seeds, 95% CI on the log scale) against the\n"
      "measured value with the relative error; for --pair A:B, the predicted relative difference A/B-1 (mean of\n"
      "the paired per-seed ratios, Student t CI) against the measured one.\n"
      "With --against RUN.kvrec, the twin runs the run's own traffic with its policy and knobs and is compared\n"
      "with what the run measured: its fidelity on that cluster and traffic.\n"
      "  kvscope-cli calibrate check --scenario lab-004 --target resources/calibration/lab-004-unified.target.json\n"
      "  kvscope-cli calibrate check --against run.kvrec --seeds 6");
  sub->add_option("--scenario", a->scenario,
                  "The scenario (a calibrated scenario file, or any scenario); with --against, default: the run's");
  sub->add_option("--target", a->targets,
                  "Measured metrics, as `calibrate fit --target` reads them (repeatable: the rows of every file)");
  sub->add_option("--against", a->against,
                  "A recorded run (.kvrec): its traffic is the workload, its measurements the target");
  sub->add_option("--pair", a->pairs,
                  "A:B, two row labels of the targets: compare the predicted A vs B difference "
                  "with the measured one (repeatable; default: the two rows when there are two)");
  sub->add_option("--seeds", a->seeds, "N (seeds 1..N) or a list 3,7,11 (default 5)");
  sub->add_option("--duration", a->duration, "Simulated seconds of every run (default: the scenario's)")
      ->check(CLI::Range(1.0, 2.6e6).description("in [1, 30 days]"));
  sub->add_option("--jobs,-j", a->jobs, "Runs at once (default: the number of cores)")
      ->check(CLI::Range(1u, 1024u).description("in [1, 1024]"));
  sub->add_flag("--quiet", a->quiet, "No progress line");
  return [a] {
    if (a->against.empty() == a->targets.empty())
      throw UsageError("calibrate check: give --target FILE (measured metrics) or --against RUN.kvrec, one of the two");
    if (a->against.empty() && a->scenario.empty()) throw UsageError("calibrate check: --scenario is required");
    CalibrationTarget target;
    AgainstRun against;
    if (!a->against.empty()) {
      against = readRun(a->against);
      target = against.target;
      if (a->scenario.empty()) a->scenario = against.scenario;
    } else {
      target = CalibrationTarget::load(a->targets.front());
      for (std::size_t i = 1; i < a->targets.size(); ++i) target.merge(CalibrationTarget::load(a->targets[i]));
    }
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& p : a->pairs) {
      const auto colon = p.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == p.size())
        throw InputError("--pair " + p + ": expected A:B, two row labels of the targets");
      pairs.emplace_back(p.substr(0, colon), p.substr(colon + 1));
    }
    if (a->pairs.empty() && target.rows.size() == 2) pairs.emplace_back(target.rows[0].label, target.rows[1].label);
    Scenario scenario = Scenario::load(a->scenario);
    if (!a->against.empty()) {
      scenario.workload.kind = WorkloadSpec::Kind::Trace;
      scenario.workload.trace_path = std::filesystem::absolute(a->against).string();
    }
    for (const auto& row : target.rows) {  // every row must run before any work
      SimulationOptions o;
      o.policy = row.policy;
      o.knobs = row.knobs;
      o.duration_s = a->duration;
      prepareRun(scenario, o);
    }
    const CandidateRuns runs(SweepSpec::parseSeeds(a->seeds), a->duration, a->jobs);

    const auto start = std::chrono::steady_clock::now();
    ProgressLoop loop;
    loop.quiet = a->quiet;
    loop.stopping = "stopping the runs";
    const auto progress = [&](double fraction) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const std::size_t total = target.rows.size() * runs.seeds().size();
      char buf[200];
      std::snprintf(buf, sizeof buf, "calibrate check: %.0f/%zu runs (%3.0f%%)  elapsed %s  ETA %s", fraction * total,
                    total, 100 * fraction, clockText(elapsed).c_str(),
                    fraction > 0.01 ? clockText(elapsed * (1 - fraction) / fraction).c_str() : "--:--");
      loop.post(buf);
    };
    CheckResult result;
    bool cancelled = false;
    loop.run([&](const std::atomic<bool>& cancel) {
      try {
        result = CalibrationCheck::run(scenario, target, pairs, runs, cancel, progress);
      } catch (const RunsCancelled&) {
        cancelled = true;
      }
    });
    if (cancelled) {
      std::fprintf(stderr, "kvscope-cli: calibrate check interrupted: no result\n");
      return 130;
    }
    if (!a->against.empty()) {
      std::printf(
          "the twin against %s: its traffic (arrivals, sizes, prompts) on scenario %s, policy %s with the "
          "knobs it started with\n",
          a->against.c_str(), scenario.name.c_str(),
          target.rows.front().policy.empty() ? (scenario.policy + " (the scenario's: the run names none)").c_str()
                                             : target.rows.front().policy.c_str());
      for (const auto& m : against.modelled) std::printf("modelled: %s\n", m.c_str());
      if (against.changes > 0)
        std::printf(
            "note: the run changed knobs or the policy %ld times while it ran; the twin keeps the first "
            "settings\n",
            against.changes);
    }
    std::fputs(CalibrationCheck::table(result, scenario.name, target).c_str(), stdout);
    return 0;
  };
}

}  // namespace kvscope::cli
