#pragma once
// What-if previews of a simulation while it runs, embedded in the console or served by
// `kvscope-cli serve`: keeps the run's prepared start and, as a sink of its event stream, every knob
// and policy change the run took and the newest time it reached, so that a preview can be asked for
// from any thread at any moment without touching the running simulator.
#include <atomic>
#include <mutex>
#include <vector>

#include "core/events/Event.h"
#include "core/run/WhatIfPreview.h"

namespace kvscope {

class WhatIfForecaster : public EventSink {
 public:
  explicit WhatIfForecaster(PreparedRun run) : run_(std::move(run)) {}

  // The run's thread: records control changes and the time reached.
  void onEvent(const Event& e) override;

  // The newest event time seen: every control change up to it is in history().
  SimTime now() const { return now_.load(std::memory_order_acquire); }
  std::vector<ControlStep> history() const;
  const PreparedRun& prepared() const { return run_; }

  // Blocks for both branches (two threads). Forks at `at`, or at now() when `at` is later (or < 0):
  // the past is replayed only as far as the run has been seen.
  WhatIfResult preview(SimTime at, SimTime horizon, const ControlStep& change,
                       const std::atomic<bool>* cancel = nullptr) const;

 private:
  const PreparedRun run_;
  mutable std::mutex mutex_;
  std::vector<ControlStep> history_;
  std::atomic<SimTime> now_{0};
};

}  // namespace kvscope
