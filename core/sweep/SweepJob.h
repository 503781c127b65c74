#pragma once
// A sweep running on a thread of its own (core's SweepRunner, which runs `jobs` runs at once), seen
// by the GUI only through drain(): the runner's threads append progress and finished runs to a
// staging buffer under a mutex, and the GUI's timer swaps it out (the PlotJuggler/cabana pattern).
// No signal per run and no call into Qt from the runner's threads.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/sweep/SweepRunner.h"

namespace kvscope {

class SweepJob {
 public:
  struct FinishedRun {
    std::size_t point = 0, seed_index = 0;
    RunSummary summary;
  };
  // What happened since the last drain().
  struct Update {
    std::optional<SweepProgress> progress;  // the latest, when it changed
    std::vector<FinishedRun> runs;          // runs whose summary appeared, in the order they finished
    bool done = false;                      // the thread has ended: outcome or error is set
    std::optional<SweepOutcome> outcome;
    std::string error;  // the sweep could not run at all
  };

  // Starts at once; `spec` must have been validated. Runs are recorded in `dir` through `recorders`
  // (the app passes the backend's .kvrec recorder).
  SweepJob(SweepSpec spec, std::string dir, SweepRecorderFactory recorders, bool resume = false);
  // Cancels and waits: a running run stops at its next simulated minute.
  ~SweepJob();
  SweepJob(const SweepJob&) = delete;
  SweepJob& operator=(const SweepJob&) = delete;

  void cancel() { cancel_ = true; }
  bool cancelling() const { return cancel_.load(); }
  Update drain();

 private:
  void run(SweepSpec spec, bool resume);
  void collect(const SweepRunner& runner, const SweepProgress& progress);

  std::string dir_;
  SweepRecorderFactory recorders_;
  std::atomic<bool> cancel_{false};
  std::mutex mutex_;  // guards staged_
  Update staged_;
  // Touched only in collect(), which the runner calls one thread at a time.
  std::vector<std::vector<bool>> collected_;  // [point][seed]: already staged
  std::vector<SweepPoint> points_;
  std::vector<std::uint64_t> seeds_;
  std::size_t done_count_ = 0;  // finished + reused at the last collect
  std::thread thread_;
};

}  // namespace kvscope
