#pragma once
// Splits a live session's stream at its run markers (Control.MarkRun) into one stream per marked
// run, each a run of its own: seq from 0, time from the run's start, opened by a RunStarted that
// restates the session (workers, the policy and knobs in effect at the run's start, the run's name
// as the scenario) and the session's newest Snapshot, then the start marker, the run's events, the
// end marker and RunFinished. So a run's recording replays, and its summary and diagnosis come out
// of the same RunAnalysis as `simulate` and `report`. The recorder (`serve --live --runs DIR`) and
// the console's list of a sweep's runs both sit on it.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/events/Event.h"
#include "core/metrics/RunAnalysis.h"

namespace kvscope {

struct MarkedRun {
  RunMarked start;            // index, name, parameters, who started it
  std::string ended_by;       // who ended it (kRunEndedBySession when the session stopped first)
  SimTime session_start = 0;  // where the run sits in the session, microseconds
  SimTime session_end = 0;
  RunSummary summary;  // scenario = the run's name; diagnosis filled in
};

class MarkedRunSplitter : public EventSink {
 public:
  struct Hooks {
    // A run began: the sink that gets its events (from its RunStarted on), or nullptr.
    std::function<EventSink*(const RunMarked& start)> opened;
    // A run ended (after its last event went to the sink `opened` gave).
    std::function<void(const MarkedRun& run)> closed;
  };
  explicit MarkedRunSplitter(Hooks hooks);

  // The session's stream, in order, from one thread.
  void onEvent(const Event& e) override;

  // The run open now, if any (for a "recording run 3 'k200'" status).
  const std::optional<RunMarked>& openRun() const { return open_start_; }

 private:
  void openRun(const Event& marker, const RunMarked& start);
  void closeRun(const Event& marker, const RunMarked& end, bool completed);
  void forward(SimTime session_time, EventPayload payload);

  Hooks hooks_;
  RunStarted session_;                // kept current: policy, knobs
  std::optional<Snapshot> snapshot_;  // the newest, to open a run with its gauges known
  std::optional<RunMarked> open_start_;
  SimTime run_t0_ = 0;
  std::uint64_t run_seq_ = 0;
  std::optional<RunAnalysis> analysis_;
  EventSink* sink_ = nullptr;
};

}  // namespace kvscope
