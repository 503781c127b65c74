#include "core/sweep/SweepRunner.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/io/AtomicFile.h"
#include "core/model/Error.h"
#include "core/run/ParallelJobs.h"
#include "core/sweep/RunSummaryJson.h"

namespace kvscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// Thrown from the simulation's progress callback to stop a run between events when the sweep is
// cancelled: runSimulation holds only locals, so unwinding through it is clean.
struct RunCancelled {};
}  // namespace

struct SweepRunner::Job {
  std::size_t point = 0, seed_index = 0;
  std::uint64_t seed = 0;
  std::string stem;
  std::optional<RunSummary> summary;
  double fraction = 0;  // of the simulated duration, while running
  bool running = false;
  std::string error;
};

SweepRunner::SweepRunner(SweepSpec spec, std::string dir, SweepRecorderFactory recorders)
    : spec_(std::move(spec)),
      scenario_(Scenario::load(spec_.scenario)),
      points_(spec_.points()),
      dir_(std::move(dir)),
      recorders_(std::move(recorders)) {}

std::string SweepRunner::runStem(const SweepPoint& point, std::uint64_t seed) {
  return point.fileStem() + "-seed" + std::to_string(seed);
}

std::vector<std::string> SweepRunner::runStems() const {
  std::vector<std::string> out;
  for (const auto& point : points_)
    for (std::uint64_t seed : spec_.seeds) out.push_back(runStem(point, seed));
  return out;
}

json SweepRunner::runIdentity(const SweepPoint& point, std::uint64_t seed) const {
  const SimulationOptions o = spec_.optionsFor(point, seed);
  json id;
  id["scenario"] = spec_.scenario;
  id["point"] = point.label();
  id["policy"] = o.policy;
  id["knobs"] = o.knobs;
  id["seed"] = seed;
  id["duration_s"] = o.duration_s ? json(*o.duration_s) : json(nullptr);
  // Only when set, so the runs of a sweep made before these options existed still resume.
  if (o.dispatch) id["dispatch"] = toString(*o.dispatch);
  if (o.max_inflight_sessions) id["max_inflight_sessions"] = *o.max_inflight_sessions;
  if (o.wall_deadline_s) id["wall_deadline_s"] = *o.wall_deadline_s;
  if (!o.trace.empty()) id["trace"] = o.trace;
  id["recording"] = runStem(point, seed) + ".kvrec";
  return id;
}

std::optional<RunSummary> SweepRunner::readDone(const Job& job) const {
  const fs::path summary = fs::path(dir_) / (job.stem + ".json");
  const fs::path recording = fs::path(dir_) / (job.stem + ".kvrec");
  std::error_code ec;
  if (!fs::is_regular_file(summary, ec)) return std::nullopt;
  if (recorders_ && !fs::is_regular_file(recording, ec)) return std::nullopt;  // recorded sweeps keep both
  try {
    std::ifstream in(summary);
    const json j = json::parse(in);
    // A summary of another run (the spec changed since) is not this run's result.
    if (j.at("sweep_run") != runIdentity(points_[job.point], job.seed)) return std::nullopt;
    return RunSummaryJson::fromJson(j.at("summary"));
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: run it again
  }
}

void SweepRunner::runOne(Job& job, const std::atomic<bool>& cancel, const std::function<void(double)>& fraction) {
  const SweepPoint& point = points_[job.point];
  const std::string rec_path = (fs::path(dir_) / (job.stem + ".kvrec")).string();
  const std::string rec_tmp = AtomicFile::partialPath(rec_path);
  SimulationOptions options = spec_.optionsFor(point, job.seed);
  std::unique_ptr<SweepRecorder> recorder = recorders_ ? recorders_(rec_tmp) : nullptr;
  if (recorder) options.sinks.push_back(&recorder->sink());
  options.progress = [&](double sim, double end) {
    if (cancel.load()) throw RunCancelled{};
    fraction(end > 0 ? std::min(1.0, sim / end) : 0);
  };
  RunSummary summary = runSimulation(scenario_, options);
  if (cancel.load()) throw RunCancelled{};
  std::string error;
  if (recorder && !recorder->close(&error)) throw InputError(error);
  recorder.reset();
  if (recorders_) {
    if (!AtomicFile::moveIntoPlace(rec_tmp, rec_path, &error)) throw InputError(error);
  }
  json j;
  j["sweep_run"] = runIdentity(point, job.seed);
  j["summary"] = summary.toJson();
  // The summary last: its presence is what marks the run done.
  if (!AtomicFile::write((fs::path(dir_) / (job.stem + ".json")).string(), j.dump(2) + "\n", &error))
    throw InputError(error);
  job.summary = std::move(summary);
}

std::vector<SweepRunner::Job> SweepRunner::makeJobs() const {
  std::vector<Job> jobs;
  for (std::size_t p = 0; p < points_.size(); ++p)
    for (std::size_t k = 0; k < spec_.seeds.size(); ++k)
      jobs.push_back(Job{p, k, spec_.seeds[k], runStem(points_[p], spec_.seeds[k]), std::nullopt, 0, false, {}});
  return jobs;
}

std::vector<std::size_t> SweepRunner::readBack(std::vector<Job>& jobs, SweepProgress& progress) const {
  std::vector<bool> may_run(jobs.size(), !only_);
  if (only_)
    for (std::size_t i : *only_)
      if (i < jobs.size()) may_run[i] = true;
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    // Runs outside `only` belong to someone else (another Slurm task): read back, never run.
    if (resume_ || !may_run[i]) jobs[i].summary = readDone(jobs[i]);
    if (jobs[i].summary)
      ++progress.reused;
    else if (may_run[i])
      todo.push_back(i);
  }
  return todo;
}

SweepOutcome SweepRunner::outcome(std::vector<Job>& jobs, const SweepProgress& progress, bool cancelled) const {
  SweepOutcome out;
  out.cancelled = cancelled;
  out.reused = progress.reused;
  out.ran = progress.finished;
  out.failed = progress.failed;
  SweepData& d = out.data;
  d.scenario = scenario_.name;
  d.points = points_;
  d.seeds = spec_.seeds;
  d.baseline = spec_.baselineIndex();
  d.paired = true;
  d.level = spec_.level;
  if (spec_.traces.size() > 1) {
    std::string runs;
    for (std::size_t i = 0; i < spec_.traces.size(); ++i)
      runs += (i ? ", " : "") + std::string("seed ") + std::to_string(spec_.seeds[i]) + " = " +
              std::filesystem::path(spec_.traces[i]).filename().string();
    d.notes.push_back("replicates are " + std::to_string(spec_.traces.size()) +
                      " recorded runs, each replayed at every point (" + runs +
                      "): the pairs and intervals are over the recorded runs");
  }
  d.runs.assign(points_.size(), std::vector<std::optional<RunSummary>>(spec_.seeds.size()));
  d.recordings.assign(points_.size(), std::vector<std::string>(spec_.seeds.size()));
  for (auto& job : jobs) {
    if (!job.error.empty()) out.errors.push_back(job.error);
    d.recordings[job.point][job.seed_index] = job.stem + ".kvrec";
    d.runs[job.point][job.seed_index] = std::move(job.summary);
  }
  return out;
}

SweepOutcome SweepRunner::run(const std::atomic<bool>& cancel) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Job> jobs = makeJobs();

  fs::create_directories(dir_);
  SweepProgress progress;
  progress.total = jobs.size();
  const std::vector<std::size_t> todo = readBack(jobs, progress);
  progress.to_run = todo.size();

  std::mutex mutex;    // guards progress, the jobs' running state and the progress callback
  auto report = [&] {  // mutex held
    if (!progress_) return;
    double partial = 0;
    progress.running = 0;
    for (std::size_t i : todo)
      if (jobs[i].running) {
        ++progress.running;
        partial += jobs[i].fraction;
      }
    progress.work_done = static_cast<double>(progress.finished + progress.failed) + partial;
    progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (progress.work_done > 0.01)
      progress.eta_s =
          progress.elapsed_s * (static_cast<double>(progress.to_run) - progress.work_done) / progress.work_done;
    progress_(progress);
  };
  {
    std::lock_guard lock(mutex);
    report();
  }

  runParallelJobs(
      todo.size(), spec_.effectiveJobs(), [&] { return !cancel.load(); },
      [&](std::size_t t) {
        Job& job = jobs[todo[t]];
        {
          std::lock_guard lock(mutex);
          job.running = true;
          report();
        }
        bool cancelled = false;
        try {
          runOne(job, cancel, [&](double f) {
            std::lock_guard lock(mutex);
            job.fraction = f;
            report();
          });
        } catch (const RunCancelled&) {
          cancelled = true;
        } catch (const std::exception& e) {
          job.error = job.stem + ": " + e.what();
        }
        if (!job.summary) {  // nothing half-written stays behind
          std::error_code ec;
          fs::remove(AtomicFile::partialPath((fs::path(dir_) / (job.stem + ".kvrec")).string()), ec);
        }
        std::lock_guard lock(mutex);
        job.running = false;
        if (job.summary)
          ++progress.finished;
        else if (!cancelled)
          ++progress.failed;
        report();
      });

  return outcome(jobs, progress, cancel.load() && progress.finished + progress.failed < todo.size());
}

}  // namespace kvscope
