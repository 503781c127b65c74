#include "run/SimulationRun.h"

#include <chrono>

#include "diagnosis/DiagnosisEngine.h"
#include "metrics/SummaryCollector.h"
#include "model/Error.h"
#include "run/WorkloadFactory.h"
#include "sim/ClusterSimulator.h"

namespace kvscope {

RunSummary runSimulation(Scenario scenario, const SimulationOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  if (options.seed) scenario.seed = *options.seed;
  if (options.duration_s) scenario.duration_s = *options.duration_s;
  if (!options.policy.empty()) scenario.policy = options.policy;
  for (const auto& [k, v] : options.knobs) scenario.knobs[k] = v;
  {
    KnobRegistry check;  // validate before any work: unknown knobs and ranges fail fast
    auto r = check.apply(scenario.knobs, "check");
    if (!r.ok) throw InputError(r.error);
  }
  Workload workload = buildWorkload(scenario, scenario.seed, options.trace, options.lenient);
  const long skipped = static_cast<long>(workload.skipped_records);
  ClusterSimulator sim(scenario, std::move(workload), scenario.seed);
  SummaryCollector summary;
  DiagnosisEngine diagnosis;
  sim.addSink(&summary);
  sim.addSink(&diagnosis);
  for (EventSink* s : options.sinks) sim.addSink(s);
  sim.start();
  const SimTime minute = secondsToTime(60);
  for (SimTime t = minute; !sim.done(); t += minute) {
    sim.runUntil(t);
    if (options.progress) options.progress(timeToSeconds(sim.now()), scenario.duration_s);
    if (t >= sim.endTime()) break;
  }
  sim.finish(true);
  RunSummary s = summary.summary();
  s.diagnosis = diagnosis.findings();
  s.skipped_records = skipped;
  s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return s;
}

}  // namespace kvscope
