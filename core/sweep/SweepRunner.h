#pragma once
// Runs every (grid point, seed) of a sweep on a pool of threads, each run writing
// DIR/<point>-seed<k>.kvrec (through the recorder factory) and DIR/<point>-seed<k>.json, both
// through a hidden temporary renamed into place once complete, the summary last: a run counts as
// done exactly when its summary file exists and describes that run. With resume, runs already done
// are read back instead of run again. Cancelling (the flag, from Ctrl+C) stops every running run at
// its next simulated minute and deletes its temporaries; nothing half-written is ever counted.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/sweep/SweepData.h"
#include "core/sweep/SweepRecorder.h"
#include "core/sweep/SweepSpec.h"

namespace kvscope {

struct SweepProgress {
  std::size_t total = 0;     // runs in the sweep
  std::size_t reused = 0;    // already done (resume)
  std::size_t to_run = 0;    // total - reused
  std::size_t finished = 0;  // run now, done
  std::size_t failed = 0;
  std::size_t running = 0;
  double work_done = 0;  // finished + the simulated fraction of each running run
  double elapsed_s = 0;
  std::optional<double> eta_s;  // once some work is done
};

struct SweepOutcome {
  SweepData data;
  std::size_t reused = 0, ran = 0, failed = 0;
  bool cancelled = false;
  std::vector<std::string> errors;  // one per failed run
};

class SweepRunner {
 public:
  // `spec` must have been validated.
  SweepRunner(SweepSpec spec, std::string dir, SweepRecorderFactory recorders);

  void setResume(bool resume) { resume_ = resume; }
  // Runs only these runs (indices into the grid's runs, point-major: point * seeds + seed index);
  // every other run is read back from DIR when done there, else left missing. A Slurm task runs its
  // share this way, and an empty list only collects what is done (to write the summary or a status).
  void setOnly(std::vector<std::size_t> runs) { only_ = std::move(runs); }
  // Called from the worker threads (one at a time) when a run starts, every simulated minute of a
  // run, and when a run ends.
  void setProgress(std::function<void(const SweepProgress&)> progress) { progress_ = std::move(progress); }

  SweepOutcome run(const std::atomic<bool>& cancel);

  // "K=200_policy=kv-aware-seed3": the runs' file names without extension.
  static std::string runStem(const SweepPoint& point, std::uint64_t seed);
  // Every run's stem, in run index order (point-major).
  std::vector<std::string> runStems() const;
  // The identity a per-run summary file carries, checked on resume.
  nlohmann::json runIdentity(const SweepPoint& point, std::uint64_t seed) const;

 private:
  struct Job;
  std::optional<RunSummary> readDone(const Job& job) const;
  void runOne(Job& job, const std::atomic<bool>& cancel, const std::function<void(double)>& fraction);
  // run()'s first and last steps: every (point, seed) as a job, the jobs already done read back
  // (resume, or outside `only`) and the indices of those to run; then the outcome from the jobs.
  std::vector<Job> makeJobs() const;
  std::vector<std::size_t> readBack(std::vector<Job>& jobs, SweepProgress& progress) const;
  SweepOutcome outcome(std::vector<Job>& jobs, const SweepProgress& progress, bool cancelled) const;

  SweepSpec spec_;
  Scenario scenario_;
  std::vector<SweepPoint> points_;
  std::string dir_;
  SweepRecorderFactory recorders_;
  bool resume_ = false;
  std::optional<std::vector<std::size_t>> only_;
  std::function<void(const SweepProgress&)> progress_;
};

}  // namespace kvscope
