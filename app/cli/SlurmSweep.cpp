#include "app/cli/SlurmSweep.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "app/cli/ProgressLoop.h"
#include "app/cli/SystemCommandRunner.h"
#include "backend/recording/KvrecSweepRecorder.h"
#include "core/io/AtomicFile.h"
#include "core/model/Error.h"
#include "core/sweep/SweepAnalysis.h"
#include "core/sweep/SweepFile.h"
#include "core/sweep/SweepReport.h"
#include "core/sweep/SweepRunner.h"

namespace kvscope::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kListEveryRunUpTo = 200;

std::string specPath(const std::string& dir) { return (fs::path(dir) / "sweep.json").string(); }

SweepSpec loadSpec(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(specPath(dir), ec))
    throw InputError(dir + ": no sweep.json here; it is written by `kvscope-cli sweep ... --executor slurm --out " +
                     dir + "`");
  SweepSpec spec = SweepFile::load(specPath(dir));
  spec.validate();
  return spec;
}

// What is done in DIR, running nothing: the same reading as a local --resume.
SweepOutcome collect(const SweepSpec& spec, const std::string& dir) {
  SweepRunner runner(spec, dir, KvrecSweepRecorder::factory());
  runner.setOnly({});
  std::atomic<bool> cancel{false};
  return runner.run(cancel);
}

std::vector<bool> doneRuns(const SweepData& data) {
  std::vector<bool> done;
  for (const auto& point : data.runs)
    for (const auto& run : point) done.push_back(run.has_value());
  return done;
}

bool complete(const SweepData& data) {
  for (const auto& point : data.runs)
    for (const auto& run : point)
      if (!run) return false;
  return true;
}

// Every task that finds the sweep complete writes the summary: two at once write the same bytes, each
// through its own temporary and rename, so the race is harmless.
void writeSummary(const SweepData& data, const std::string& dir) {
  const SweepAnalysis analysis = SweepAnalysis::of(data);
  std::string error;
  if (!SweepReport(data, analysis).writeAll(dir, &error)) throw InputError(error);
  const fs::path d(dir);
  std::printf("wrote %s, %s, %s\n", (d / "summary.md").c_str(), (d / "summary.csv").c_str(),
              (d / "summary.json").c_str());
}

// The tasks run this same binary: like the sweep directory, it must be where every node sees it.
std::string selfPath() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError("cannot find kvscope-cli's own path for the Slurm tasks: " + ec.message());
  return exe.string();
}

}  // namespace

int SlurmSweep::submit(const SweepSpec& spec, const std::string& out, bool resume, const SlurmOptions& options) {
  std::error_code ec;
  const std::string dir = fs::absolute(out, ec).lexically_normal().string();
  fs::create_directories(dir, ec);
  if (ec) throw InputError("--out " + out + ": cannot create: " + ec.message());
  SystemCommandRunner commands;
  SlurmExecutor slurm(dir, commands);
  // What the runs are, not how many at once: a task runs --cpus-per-task of them (so a resume with
  // another --jobs is still the same sweep).
  SweepSpec stored = spec;
  stored.jobs = 0;
  const std::string text = SweepFile::text(stored);

  // Runs of an earlier submission still queued or running are not submitted twice; and they read
  // sweep.json when they start, so it may not change under them.
  std::vector<SlurmRunStatus> states;
  if (!slurm.jobs().empty() && fs::is_regular_file(specPath(dir), ec)) {
    const bool same = SlurmExecutor::readText(specPath(dir)) == text;
    SweepSpec earlier = same ? spec : SweepFile::load(specPath(dir));
    earlier.validate();
    states = slurm.states(doneRuns(collect(earlier, dir).data),
                          SweepRunner(earlier, dir, KvrecSweepRecorder::factory()).runStems());
    std::size_t active = 0;
    for (const auto& s : states) active += s.state == SlurmRunState::Running || s.state == SlurmRunState::Pending;
    if (active > 0 && (!resume || !same))
      throw InputError(dir + ": " + std::to_string(active) + " runs of " + (same ? "this" : "another") +
                       " sweep are still queued or running on Slurm (see `kvscope-cli sweep --status " + dir +
                       "`); wait for them or scancel them" + (same ? ", or add --resume" : ""));
    if (!same) states.clear();
  }
  std::string error;
  if (!AtomicFile::write(specPath(dir), text, &error)) throw InputError(error);

  const SweepOutcome now = resume ? collect(spec, dir) : SweepOutcome{};
  const std::vector<std::string> stems = SweepRunner(spec, dir, KvrecSweepRecorder::factory()).runStems();
  std::vector<std::size_t> runs;
  std::size_t queued = 0;
  const std::vector<bool> done = resume ? doneRuns(now.data) : std::vector<bool>(stems.size(), false);
  for (std::size_t i = 0; i < stems.size(); ++i) {
    const bool active =
        i < states.size() && (states[i].state == SlurmRunState::Running || states[i].state == SlurmRunState::Pending);
    if (active)
      ++queued;
    else if (!done[i])
      runs.push_back(i);
  }
  if (runs.empty()) {
    if (queued > 0) {
      std::printf(
          "sweep %s: nothing to submit: %zu runs still queued or running; the last of them writes the summary\n",
          dir.c_str(), queued);
      return 0;
    }
    std::printf("sweep %s: every one of %zu runs is done\n", dir.c_str(), stems.size());
    writeSummary(now.data, dir);
    return 0;
  }
  // A task runs `cpus_per_task` runs at once; the runs are not the scheduler's business.
  const SlurmSubmission s = slurm.submit(runs, options, selfPath(), resume);
  std::printf("sweep %s: submitted Slurm job %s: %zu runs in %zu array tasks (script %s)\n", dir.c_str(),
              s.job_id.c_str(), runs.size(), s.tasks, s.script_path.c_str());
  if (queued > 0) std::printf("%zu runs of earlier submissions are still queued or running\n", queued);
  std::printf("follow it with: kvscope-cli sweep --status %s (the summary is written when the last run lands)\n",
              dir.c_str());
  return 0;
}

int SlurmSweep::runTask(const std::string& dir, int submission, std::size_t task, unsigned jobs, bool resume) {
  SweepSpec spec = loadSpec(dir);
  if (jobs > 0) spec.jobs = jobs;
  SystemCommandRunner commands;
  SlurmExecutor slurm(dir, commands);
  const std::vector<std::size_t> share = slurm.taskRuns(submission, task);

  SweepRunner runner(spec, dir, KvrecSweepRecorder::factory());
  runner.setOnly(share);
  runner.setResume(resume);  // a resumed submission (or a requeued task) does not redo a done run
  const std::vector<std::string> stems = runner.runStems();
  std::error_code ec;
  for (std::size_t i : share)  // an error of an earlier attempt is not this attempt's
    if (i < stems.size()) fs::remove(slurm.errorPath(stems[i]), ec);
  std::printf("task %zu of submission %d: %zu runs\n", task, submission, share.size());
  std::fflush(stdout);
  ProgressLoop loop;
  loop.stopping = "stopping the running runs (Slurm cancelled the task or its time is up)";
  runner.setProgress([&](const SweepProgress& p) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "task: %zu/%zu runs of its share done (%zu running, %zu failed)", p.finished,
                  p.to_run, p.running, p.failed);
    loop.post(buf);
  });
  SweepOutcome outcome;
  loop.run([&](const std::atomic<bool>& cancel) { outcome = runner.run(cancel); });

  for (const auto& e : outcome.errors) {
    std::fprintf(stderr, "kvscope-cli: error: run failed: %s\n", e.c_str());
    const std::string stem = e.substr(0, e.find(": "));  // SweepRunner's "STEM: what went wrong"
    std::string error;
    if (!AtomicFile::write(slurm.errorPath(stem), e + "\n", &error))
      std::fprintf(stderr, "kvscope-cli: %s\n", error.c_str());
  }
  if (outcome.cancelled) {
    std::fprintf(stderr,
                 "kvscope-cli: task cancelled after %zu runs; `kvscope-cli sweep ... --resume` resubmits the rest\n",
                 outcome.ran);
    return 130;
  }
  std::printf("task %zu of submission %d: %zu ran, %zu already done, %zu failed\n", task, submission, outcome.ran,
              share.size() - outcome.ran - outcome.failed, outcome.failed);
  // This task's runs are in place before it looks, so of two tasks ending together at least the
  // later one sees every run.
  const SweepOutcome all = collect(spec, dir);
  if (complete(all.data)) writeSummary(all.data, dir);
  return outcome.failed > 0 ? 1 : 0;
}

int SlurmSweep::status(const std::string& out) {
  std::error_code ec;
  const std::string dir = fs::absolute(out, ec).lexically_normal().string();
  const SweepSpec spec = loadSpec(dir);
  const SweepOutcome now = collect(spec, dir);
  const std::vector<std::string> stems = SweepRunner(spec, dir, KvrecSweepRecorder::factory()).runStems();
  SystemCommandRunner commands;
  SlurmExecutor slurm(dir, commands);
  const std::vector<SlurmRunStatus> states = slurm.states(doneRuns(now.data), stems);

  std::size_t count[5] = {0, 0, 0, 0, 0};
  for (const auto& s : states) ++count[static_cast<int>(s.state)];
  std::printf("sweep %s (%s): %zu runs: %zu done, %zu running, %zu pending, %zu failed, %zu missing\n", dir.c_str(),
              now.data.scenario.c_str(), states.size(), count[0], count[1], count[2], count[3], count[4]);
  std::string jobs;
  for (const auto& [n, id] : slurm.jobs()) jobs += " " + id + " (submission " + std::to_string(n) + ")";
  std::printf("Slurm jobs:%s\n", jobs.empty() ? " none" : jobs.c_str());
  const bool written = fs::is_regular_file(fs::path(dir) / "summary.json", ec);
  if (complete(now.data))
    std::printf("summary: %s\n", written ? "written" : "not written yet (`--resume` writes it)");
  else
    std::printf("summary: not yet (the last run to land writes it; `--resume` resubmits failed and missing runs)\n");
  for (const auto& note : slurm.notes()) std::printf("note: %s\n", note.c_str());
  // Every run of a small sweep; of a big one (thousands of runs) only those not done.
  const bool all = states.size() <= kListEveryRunUpTo;
  if (!all) std::printf("runs not done (the %zu done are not listed):\n", count[0]);
  for (std::size_t i = 0; i < states.size(); ++i) {
    const auto& s = states[i];
    if (!all && s.state == SlurmRunState::Done) continue;
    std::printf("%-8s %s%s%s%s%s\n", SlurmExecutor::stateName(s.state).c_str(), stems[i].c_str(),
                s.task.empty() ? "" : "  task ", s.task.c_str(), s.detail.empty() ? "" : "  ", s.detail.c_str());
  }
  return 0;
}

}  // namespace kvscope::cli
