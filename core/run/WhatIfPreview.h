#pragma once
// "What if I applied this now?": forks a simulated run at `now` and plays the next `horizon` twice on
// the same seed, without and with a pending knob or policy change, and returns both futures (per
// decode worker gauge, latencies) with a summary of the horizon alone.
//
// The simulator cannot be copied, so each branch replays the run from its start with the knob and
// policy changes it had at their times, then forks: the two branches run on two threads. A replayed
// change takes effect after every event at its time (the live run may have taken it between two
// events of the same microsecond): the prefix matches the run up to that.
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/metrics/RunSummary.h"
#include "core/model/Ids.h"
#include "core/run/SimulationRun.h"
#include "core/telemetry/MinMaxSeries.h"
#include "core/telemetry/WorkerGauge.h"

namespace kvscope {

struct ControlStep {
  SimTime time = 0;
  std::map<std::string, double> knobs;
  std::optional<std::string> policy;
  bool empty() const { return knobs.empty() && !policy; }
};

// Adds a KnobChanged or PolicyChanged event to `steps` (one step per instant; other events are
// ignored): the history a preview replays, built from a run's event stream.
void appendControlStep(std::vector<ControlStep>& steps, const Event& e);

struct WhatIfFuture {
  std::vector<std::string> workers;  // decode workers, in run order
  // Every per-worker gauge by its key (WorkerGauge.h), one series per decode worker: the samples the
  // telemetry store would keep, so a chart draws its forecast under the name it draws the run by.
  std::map<std::string, std::vector<MinMaxSeries>> per_worker;
  MinMaxSeries ttft, e2e;  // finished requests (seconds)
  RunSummary horizon;      // requests, bindings, evictions of [now, now + horizon] only
  std::string error;       // the change was refused (then the future is empty)

  // The series of `gauge`, one per decode worker (null: the future has none, e.g. it was refused).
  const std::vector<MinMaxSeries>* perWorker(WorkerGauge gauge) const;
};

struct WhatIfResult {
  SimTime from = 0, to = 0;
  WhatIfFuture without, with;
  double wall_ms = 0;
  bool cancelled = false;
};

class WhatIfPreview {
 public:
  // `run` outlives the preview; `history` in time order.
  WhatIfPreview(const PreparedRun& run, std::vector<ControlStep> history);

  // Blocks for both branches (two threads); `cancel` set by another thread stops early.
  WhatIfResult run(SimTime now, SimTime horizon, const ControlStep& change,
                   const std::atomic<bool>* cancel = nullptr) const;

 private:
  WhatIfFuture branch(SimTime now, SimTime horizon, const ControlStep* change, const std::atomic<bool>* cancel) const;

  const PreparedRun& run_;
  std::vector<ControlStep> history_;
};

}  // namespace kvscope
