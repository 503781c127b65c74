#include "core/sweep/SweepJob.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/sweep/RunSummaryJson.h"

namespace kvscope {

SweepJob::SweepJob(SweepSpec spec, std::string dir, SweepRecorderFactory recorders, bool resume)
    : dir_(std::move(dir)), recorders_(std::move(recorders)) {
  points_ = spec.points();
  seeds_ = spec.seeds;
  collected_.assign(points_.size(), std::vector<bool>(seeds_.size(), false));
  thread_ = std::thread([this, resume, spec = std::move(spec)]() mutable { run(std::move(spec), resume); });
}

SweepJob::~SweepJob() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
}

void SweepJob::run(SweepSpec spec, bool resume) {
  std::optional<SweepOutcome> outcome;
  std::string error;
  try {
    SweepRunner runner(std::move(spec), dir_, recorders_);
    runner.setResume(resume);
    runner.setProgress([this, &runner](const SweepProgress& p) { collect(runner, p); });
    outcome = runner.run(cancel_);
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(mutex_);
  staged_.done = true;
  staged_.outcome = std::move(outcome);
  staged_.error = std::move(error);
}

// Called on the runner's threads, one at a time. The runner reports only counts; a run is done
// exactly when its summary file exists and names that run (SweepRunner's contract), so when the
// count moves the new summaries are read back from the directory.
void SweepJob::collect(const SweepRunner& runner, const SweepProgress& progress) {
  std::vector<FinishedRun> found;
  if (progress.finished + progress.reused != done_count_) {
    done_count_ = progress.finished + progress.reused;
    namespace fs = std::filesystem;
    for (std::size_t p = 0; p < points_.size(); ++p)
      for (std::size_t k = 0; k < seeds_.size(); ++k) {
        if (collected_[p][k]) continue;
        const fs::path file = fs::path(dir_) / (SweepRunner::runStem(points_[p], seeds_[k]) + ".json");
        std::error_code ec;
        if (!fs::is_regular_file(file, ec)) continue;
        try {
          std::ifstream in(file);
          const nlohmann::json j = nlohmann::json::parse(in);
          if (j.at("sweep_run") != runner.runIdentity(points_[p], seeds_[k])) continue;  // a stale run's file
          found.push_back({p, k, RunSummaryJson::fromJson(j.at("summary"))});
          collected_[p][k] = true;
        } catch (const std::exception&) {
          // Unreadable: the final outcome still has it when the runner counted it.
        }
      }
  }
  std::lock_guard lock(mutex_);
  staged_.progress = progress;
  for (auto& f : found) staged_.runs.push_back(std::move(f));
}

SweepJob::Update SweepJob::drain() {
  Update out;
  std::lock_guard lock(mutex_);
  std::swap(out, staged_);
  staged_.done = out.done;  // done stays done
  return out;
}

}  // namespace kvscope
