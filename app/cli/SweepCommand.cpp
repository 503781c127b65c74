// `kvscope-cli sweep`: a grid of policies and knob values over paired seeds on the simulated cluster,
// run in parallel, each run recorded, then the lab's tables with intervals and paired verdicts.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "app/cli/CliCommands.h"
#include "app/cli/ProgressLoop.h"
#include "app/cli/RunOptions.h"
#include "app/cli/SlurmSweep.h"
#include "backend/recording/KvrecSweepRecorder.h"
#include "core/io/DirectoryLock.h"
#include "core/knobs/KnobRegistry.h"
#include "core/model/Error.h"
#include "core/model/NumberText.h"
#include "core/sweep/SweepAnalysis.h"
#include "core/sweep/SweepFile.h"
#include "core/sweep/SweepReport.h"
#include "core/sweep/SweepRunner.h"

namespace kvscope::cli {

namespace {

struct SweepArgs {
  std::string file;
  std::string scenario;
  std::vector<std::string> grid;
  std::string seeds;
  std::string baseline;
  std::vector<std::string> sets;
  std::optional<double> duration;
  std::string dispatch;
  std::optional<long> max_inflight_sessions;
  std::vector<std::string> traces;
  std::optional<double> request_timeout;
  std::optional<double> wall_deadline;
  std::optional<unsigned> jobs;
  std::optional<double> level;
  std::string out;
  bool resume = false;
  bool quiet = false;
  std::string executor = "local";
  SlurmOptions slurm;
  std::string status;    // --status DIR
  std::string task_dir;  // the hidden --run-task DIR of a Slurm array task
  int submission = 0;
  std::optional<std::size_t> task_index;
};

std::string progressLine(const SweepProgress& p) {
  char buf[256];
  const double pct = p.to_run > 0 ? 100.0 * p.work_done / static_cast<double>(p.to_run) : 100.0;
  std::snprintf(buf, sizeof buf,
                "sweep: %zu/%zu runs done (%zu running, %zu reused, %zu failed) %3.0f%%  elapsed %s  ETA %s",
                p.finished + p.reused, p.total, p.running, p.reused, p.failed, pct, clockText(p.elapsed_s).c_str(),
                p.eta_s ? clockText(*p.eta_s).c_str() : "--:--");
  return buf;
}

// --trace values as the sweep's traces: a folder holding recordings is its .kvrec files (by name), one
// replicate each; anything else (a trace, a recording, a folder of kv-cache-tester sessions) as given.
std::vector<std::string> expandTraces(const std::vector<std::string>& given) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& t : given) {
    std::error_code ec;
    std::vector<std::string> runs;
    if (fs::is_directory(t, ec))
      for (const auto& entry : fs::directory_iterator(t, ec))
        if (entry.path().extension() == ".kvrec" && entry.is_regular_file(ec)) runs.push_back(entry.path().string());
    std::sort(runs.begin(), runs.end());
    if (runs.empty()) runs.push_back(t);
    out.insert(out.end(), runs.begin(), runs.end());
  }
  return out;
}

SweepSpec specFrom(const SweepArgs& a) {
  SweepSpec spec;
  const std::vector<std::string> traces = expandTraces(a.traces);
  if (!a.file.empty()) {
    spec = SweepFile::load(a.file);
  } else {
    // Recorded runs run on their own scenario unless told otherwise, as with simulate --trace.
    spec.scenario = scenarioOf(a.scenario, traces.empty() ? std::string() : traces.front());
    for (const auto& g : a.grid) spec.axes.push_back(SweepSpec::parseGrid(g));
    // Recorded runs given as replicates are as many seeds unless told otherwise.
    const std::size_t runs = traces.size();
    spec.seeds = SweepSpec::parseSeeds(!a.seeds.empty() ? a.seeds : runs > 1 ? std::to_string(runs) : "5");
    if (!a.baseline.empty()) spec.baseline = SweepSpec::parseBaseline(a.baseline);
    for (const auto& s : a.sets)
      if (auto err = KnobRegistry::parseAssignment(s, spec.fixed_knobs)) throw InputError("--set: " + *err);
  }
  // These flags override a sweep file: how to run it, not what it is.
  if (a.duration) spec.duration_s = a.duration;
  if (!a.dispatch.empty()) spec.dispatch = parseDispatch(a.dispatch);
  if (a.max_inflight_sessions) spec.max_inflight_sessions = a.max_inflight_sessions;
  if (!traces.empty()) spec.traces = traces;
  if (a.wall_deadline) spec.wall_deadline_s = a.wall_deadline;
  if (a.request_timeout) spec.fixed_knobs["request_timeout_s"] = *a.request_timeout;
  if (a.jobs) spec.jobs = *a.jobs;
  if (a.level) spec.level = *a.level;
  return spec;
}

struct SlurmOptions {
  CLI::Option* status;
  CLI::Option* task_dir;
};

// --executor slurm and its options, --status, and the hidden options each array task runs with.
SlurmOptions addSlurmOptions(CLI::App& sub, SweepArgs& a) {
  auto* executor = sub.add_option("--executor", a.executor,
                                  "local (default): run here. slurm: submit the runs as one Slurm job array (sbatch); "
                                  "each task runs its share into DIR, which with kvscope-cli itself must be on "
                                  "storage every node sees; DIR/slurm/ keeps the script, the job ids and the logs")
                       ->check(CLI::IsMember({"local", "slurm"}));
  auto* partition = sub.add_option("--partition", a.slurm.partition, "Slurm: the partition (default: the cluster's)");
  auto* time = sub.add_option("--time", a.slurm.time, "Slurm: the time limit of each task, e.g. 2:00:00");
  auto* cpus = sub.add_option("--cpus-per-task", a.slurm.cpus_per_task,
                              "Slurm: cores of each task, the runs it runs at once (default 1)")
                   ->check(CLI::Range(1u, 1024u).description("in [1, 1024]"));
  auto* tasks = sub.add_option("--tasks", a.slurm.tasks,
                               "Slurm: array tasks the runs are dealt to (default: one per run, at most 100)")
                    ->check(CLI::Range(1u, 100000u).description("in [1, 100000]"));
  auto* status = sub.add_option("--status", a.status,
                                "Show a Slurm sweep's DIR: counts and each run's state (done from the files; running, "
                                "pending, failed from squeue and sacct when they answer), then exit");
  // What each Slurm array task runs (the script in DIR/slurm/ says it): hidden, not for people.
  auto* task_dir = sub.add_option("--run-task", a.task_dir)->group("");
  sub.add_option("--submission", a.submission)->group("")->needs(task_dir);
  sub.add_option("--task-index", a.task_index)->group("")->needs(task_dir);
  for (auto* o : {partition, time, cpus, tasks}) o->needs(executor);
  return {status, task_dir};
}

// The sweep on this machine: the runs in parallel with a progress line, then the summaries.
int runLocalSweep(const SweepArgs& a, const SweepSpec& spec) {
  namespace fs = std::filesystem;
  // One sweep per directory at a time: a second (a --resume while it runs) is refused, not raced.
  std::string lock_error;
  const auto lock = DirectoryLock::acquire(a.out, &lock_error);
  if (!lock) throw InputError("--out " + lock_error);
  SweepRunner runner(spec, a.out, KvrecSweepRecorder::factory());
  runner.setResume(a.resume);
  ProgressLoop loop;
  loop.quiet = a.quiet;
  loop.stopping = "stopping the running runs";
  runner.setProgress([&](const SweepProgress& p) { loop.post(progressLine(p)); });
  SweepOutcome outcome;
  loop.run([&](const std::atomic<bool>& cancel) { outcome = runner.run(cancel); });

  for (const auto& e : outcome.errors) std::fprintf(stderr, "kvscope-cli: error: run failed: %s\n", e.c_str());
  const std::size_t done = outcome.ran + outcome.reused;
  if (outcome.cancelled) {
    std::fprintf(stderr,
                 "kvscope-cli: sweep interrupted: %zu of %zu runs done (%zu ran now); nothing half-written was kept. "
                 "Finish it with the same command and --resume.\n",
                 done, outcome.data.points.size() * outcome.data.seeds.size(), outcome.ran);
    return 130;
  }
  const SweepAnalysis analysis = SweepAnalysis::of(outcome.data);
  const SweepReport report(outcome.data, analysis);
  std::string error;
  if (!report.writeAll(a.out, &error)) throw InputError(error);
  std::printf("sweep %s: %zu grid points x %zu seeds = %zu runs: %zu ran now, %zu reused, %zu failed\n",
              outcome.data.scenario.c_str(), outcome.data.points.size(), outcome.data.seeds.size(),
              outcome.data.points.size() * outcome.data.seeds.size(), outcome.ran, outcome.reused, outcome.failed);
  const fs::path dir(a.out);
  std::printf("wrote %s, %s, %s\n", (dir / "summary.md").c_str(), (dir / "summary.csv").c_str(),
              (dir / "summary.json").c_str());
  return outcome.failed > 0 ? 1 : 0;
}

}  // namespace

Command addSweep(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  auto* sub = app.add_subcommand(
      "sweep",
      "Run a grid of policies and knob values over the same seeds (paired runs), in parallel, and write "
      "DIR/summary.md, summary.csv and summary.json: per grid point each metric as mean [95% CI] across seeds (log "
      "scale, never below 0), the change against the baseline in %, the exact sign-flip test on the per-seed pairs "
      "(Wilcoxon p beside it) with n and the smallest p n allows, and its verdict (\"needs >= 6 seeds\" at 0.05 when "
      "fewer pairs differ); a per-D bindings table; a two-policy table when only the policy varies. Each run is kept "
      "as "
      "DIR/<point>-seed<k>.kvrec and .json. Ctrl+C stops cleanly; --resume runs only what is missing.");
  sub->add_option("file", a->file,
                  "A sweep file (JSON with comments: scenario, grid, seeds, baseline, knobs, duration_s, dispatch, "
                  "max_inflight_sessions, wall_deadline_s, trace, jobs, level) "
                  "instead of --scenario/--grid/--seeds/--baseline/--set");
  auto* scenario =
      sub->add_option("--scenario", a->scenario, "Bundled scenario name or scenario file (default e3-load-floor)");
  auto* grid =
      sub->add_option("--grid", a->grid,
                      "An axis: KNOB=V1,V2,..., policy=P1,P2,... or dispatch=tracets,thinktime,... (repeatable; "
                      "the grid is every combination)");
  auto* seeds = sub->add_option("--seeds", a->seeds,
                                "N (seeds 1..N, default 5) or a list 3,7,11 (\"7,\" is the single seed 7); every point "
                                "runs the same seeds");
  auto* baseline = sub->add_option("--baseline", a->baseline,
                                   "The grid point the others are compared with, AXIS=VALUE,... (axes not named: "
                                   "their first value; default: the first point)");
  auto* sets = sub->add_option("--set", a->sets, "A knob fixed at every point, KNOB=VALUE (repeatable)");
  for (auto* o : {scenario, grid, seeds, baseline, sets}) o->excludes(sub->get_option("file"));
  sub->add_option("--duration", a->duration, "Simulated seconds of every run (overrides the scenario's)")
      ->check(CLI::Range(0.001, 2.6e6).description("in (0, 30 days]"));
  sub->add_option("--dispatch", a->dispatch,
                  "Every run's dispatch: open, closed, tracets, thinktime or burst (see simulate)")
      ->check(CLI::IsMember({"open", "closed", "tracets", "thinktime", "burst"}));
  sub->add_option("--trace", a->traces,
                  "Every run replays this trace or recorded run (.kvrec) instead of the scenario's workload: the "
                  "counterfactual of that traffic under each point. Several recorded runs (repeated, or a folder "
                  "of .kvrec) are replicates: seed i replays the i-th, and the statistics are over the runs");
  sub->add_option("--max-inflight-sessions", a->max_inflight_sessions,
                  "Every run: at most this many sessions in flight")
      ->check(CLI::Range(0L, 1000000000L));
  sub->add_option("--request-timeout", a->request_timeout, "Every run: the knob request_timeout_s")
      ->check(CLI::Range(1.0, 86400.0).description("in [1, 86400]"));
  sub->add_option("--wall-deadline", a->wall_deadline, "Every run: requests not done by this simulated second fail")
      ->check(CLI::Range(0.0, 2.6e6).description("in [0, 30 days]"));
  sub->add_option("--jobs,-j", a->jobs, "Runs at once (default: the number of cores)")
      ->check(CLI::Range(1u, 1024u).description("in [1, 1024]"));
  sub->add_option("--level", a->level, "Significance level of the verdicts (default 0.05)")
      ->check(CLI::Range(1e-9, 0.999999).description("in (0, 1)"));
  auto* out = sub->add_option("--out,-o", a->out, "The directory for the runs and the summaries (required)");
  sub->add_flag("--resume", a->resume,
                "Keep the runs already done in DIR (their summary is there and matches); run the rest. With "
                "--executor slurm: submit only the runs neither done nor still queued, or write the summary when all "
                "are done");
  sub->add_flag("--quiet", a->quiet, "No progress line");
  const SlurmOptions slurm = addSlurmOptions(*sub, *a);
  for (auto* o : {scenario, grid, seeds, baseline, sets, out}) {
    o->excludes(slurm.status);
    o->excludes(slurm.task_dir);
  }
  sub->get_option("file")->excludes(slurm.status)->excludes(slurm.task_dir);
  slurm.status->excludes(slurm.task_dir);
  return [a] {
    if (!a->status.empty()) return SlurmSweep::status(a->status);
    if (!a->task_dir.empty()) {
      if (!a->task_index) throw UsageError("--run-task needs --task-index");
      return SlurmSweep::runTask(a->task_dir, a->submission, *a->task_index, a->jobs.value_or(0), a->resume);
    }
    if (a->out.empty()) throw UsageError("--out DIR is required (or --status DIR)");
    if (a->executor != "slurm" && (!a->slurm.partition.empty() || !a->slurm.time.empty()))
      throw UsageError("--partition and --time are for --executor slurm");
    SweepSpec spec = specFrom(*a);
    spec.validate();  // every mistake is reported here, before DIR exists or any run starts
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(a->out, ec) && !fs::is_directory(a->out, ec))
      throw InputError("--out " + a->out + ": exists and is not a directory");
    if (a->executor == "slurm") return SlurmSweep::submit(spec, a->out, a->resume, a->slurm);

    return runLocalSweep(*a, spec);
  };
}

}  // namespace kvscope::cli
