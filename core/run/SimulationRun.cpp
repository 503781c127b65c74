#include "core/run/SimulationRun.h"

#include <algorithm>
#include <chrono>

#include "core/metrics/RunAnalysis.h"
#include "core/model/Error.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/run/WorkloadFactory.h"
#include "core/sim/ClusterSimulator.h"

namespace kvscope {

PreparedRun prepareRun(Scenario scenario, const SimulationOptions& options) {
  if (options.seed) scenario.seed = *options.seed;
  if (options.duration_s) scenario.duration_s = *options.duration_s;
  if (!options.policy.empty()) {
    if (!makePolicy(options.policy)) {
      throw InputError("--policy: unknown policy '" + options.policy + "'; expected one of: " + policyNameList());
    }
    scenario.policy = options.policy;
  }
  if (options.start_window_s) scenario.workload.session_start_window_s = *options.start_window_s;
  for (const auto& [k, v] : options.knobs) scenario.knobs[k] = v;
  if (options.request_timeout_s) scenario.knobs["request_timeout_s"] = *options.request_timeout_s;
  {
    KnobRegistry check;  // validate before any work: unknown knobs and ranges fail fast
    auto r = check.apply(scenario.knobs, "check");
    if (!r.ok) throw InputError(r.error);
  }
  if (options.time_scale) scenario.workload.time_scale = *options.time_scale;
  Workload workload = buildWorkload(scenario, scenario.seed, options.trace, options.lenient);
  if (workload.times_final) {
    // A recorded run's times are already as it dispatched them: no ramp-up, no second scaling.
    if (!options.start_window_s) scenario.workload.session_start_window_s = 0;
    if (!options.time_scale) scenario.workload.time_scale = 1;
  } else if (!options.trace.empty() && scenario.workload.kind == WorkloadSpec::Kind::Synthetic &&
             !options.start_window_s) {
    // A trace replacing a synthetic workload keeps the scenario's ramp-up: closed-loop sessions
    // start spread over the generator's start window instead of all at t=0.
    scenario.workload.session_start_window_s = scenario.workload.synthetic.start_window_s;
  }
  if (options.dispatch) {
    scenario.workload.dispatch = *options.dispatch;
  } else if (auto recorded = parseDispatch(workload.dispatch); workload.times_final && recorded) {
    scenario.workload.dispatch = *recorded;
  } else if (!options.trace.empty()) {
    const bool single = std::all_of(workload.sessions.begin(), workload.sessions.end(),
                                    [](const Session& s) { return s.turns.size() <= 1; });
    scenario.workload.dispatch = single ? Dispatch::Open : Dispatch::Closed;
  }
  if (options.max_inflight_sessions) scenario.workload.max_inflight_sessions = *options.max_inflight_sessions;
  if (options.max_inflight_requests) scenario.workload.max_inflight_requests = *options.max_inflight_requests;
  if (options.wall_deadline_s) scenario.workload.wall_deadline_s = *options.wall_deadline_s;
  if (scenario.workload.max_inflight_sessions > 0 && scenario.workload.dispatch == Dispatch::Open)
    throw InputError(
        "--max-inflight-sessions: caps sessions, whose turns the open dispatch does not sequence; use "
        "--dispatch closed, tracets, thinktime or burst");
  return PreparedRun{std::move(scenario), std::move(workload)};
}

RunSummary runSimulation(Scenario scenario_in, const SimulationOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto [scenario, workload] = prepareRun(std::move(scenario_in), options);
  const long skipped = static_cast<long>(workload.skipped_records);
  ClusterSimulator sim(scenario, std::move(workload), scenario.seed);
  RunAnalysis analysis;
  sim.addSink(&analysis);
  for (EventSink* s : options.sinks) sim.addSink(s);
  sim.start();
  const SimTime minute = secondsToTime(60);
  for (SimTime t = minute; !sim.done(); t += minute) {
    sim.runUntil(t);
    if (options.progress) options.progress(timeToSeconds(sim.now()), scenario.duration_s);
    if (t >= sim.endTime()) break;
  }
  sim.finish(true);
  RunSummary s = analysis.summary();
  s.skipped_records = skipped;
  s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return s;
}

}  // namespace kvscope
