#pragma once
// Runs a scenario to completion in this thread: the workload, the simulator, the summary and the
// diagnosis, with an optional progress callback. What `kvscope-cli simulate` and the tests call.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/metrics/RunSummary.h"
#include "core/model/Workload.h"
#include "core/scenario/Scenario.h"

namespace kvscope {

struct SimulationOptions {
  std::map<std::string, double> knobs;  // --set, applied over the scenario's knobs
  std::string policy;                   // empty = the scenario's
  std::optional<std::uint64_t> seed;    // empty = the scenario's
  std::optional<double> duration_s;
  std::string trace;                          // replaces the scenario's workload
  std::optional<double> start_window_s;       // closed loop: sessions start spread over this window
  std::optional<Dispatch> dispatch;           // empty: the scenario's (for --trace: open when every session
                                              // is a single request, as Mooncake and Azure traces, else closed)
  std::optional<double> time_scale;           // trace times are multiplied by this
  std::optional<long> max_inflight_sessions;  // sessions in flight at once (0 = no cap)
  std::optional<long> max_inflight_requests;  // requests in flight at once (0 = no cap)
  std::optional<double> wall_deadline_s;      // requests not done by then fail, the run ends (0 = none)
  std::optional<double> request_timeout_s;    // the knob request_timeout_s
  bool lenient = false;
  std::vector<EventSink*> sinks;                             // extra consumers of the event stream (writers, tests)
  std::function<void(double sim_s, double end_s)> progress;  // called about every simulated minute
};

// The scenario with the options applied and validated, and its workload: what a run needs before
// it starts (used by runSimulation and by `serve`). Throws InputError before any work on bad input.
struct PreparedRun {
  Scenario scenario;
  Workload workload;
};
PreparedRun prepareRun(Scenario scenario, const SimulationOptions& options);

RunSummary runSimulation(Scenario scenario, const SimulationOptions& options);

}  // namespace kvscope
