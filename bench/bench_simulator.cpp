// Simulated seconds per wall second on e3-load-floor (one simulated hour), wall time of Mooncake's
// conversation trace on 1P+3D (its first 600 requests from tests/data always; the whole trace when
// KVSCOPE_TRACE_DIR names the folder holding conversation_trace.jsonl), and the process's peak
// memory after each; and what the lab's metrics cost to fold, per event of an e3 hour.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "bench/PeakRss.h"
#include "core/metrics/LabMetricsCollector.h"
#include "core/metrics/SummaryCollector.h"
#include "core/run/SimulationRun.h"

using namespace kvscope;
using kvscope::bench::peakRssMiB;

namespace {
// The repo's sample, found from this executable (build/bin -> build/tests/data, a link to tests/data).
std::string sampleTrace() {
  const auto exe = std::filesystem::read_symlink("/proc/self/exe");
  return (exe.parent_path().parent_path() / "tests" / "data" / "traces" / "conversation_trace_600.jsonl").string();
}

// The whole trace, or "" when KVSCOPE_TRACE_DIR is unset.
std::string wholeTrace() {
  const char* dir = std::getenv("KVSCOPE_TRACE_DIR");
  return dir && *dir ? std::string(dir) + "/conversation_trace.jsonl" : std::string();
}

void conversationTrace(benchmark::State& state, const std::string& trace) {
  if (!std::filesystem::exists(trace)) {
    state.SkipWithError(("no trace at " + trace).c_str());
    return;
  }
  Scenario s = Scenario::load("e3-load-floor");
  s.workload.dispatch = Dispatch::Open;
  SimulationOptions o;
  o.trace = trace;
  long requests = 0;
  for (auto _ : state) requests += runSimulation(s, o).total;
  state.counters["requests"] = static_cast<double>(requests) / static_cast<double>(state.iterations());
  state.counters["peak_rss_MiB"] = peakRssMiB();
}
}  // namespace

static void BM_E3OneSimulatedHour(benchmark::State& state) {
  const Scenario s = Scenario::load("e3-load-floor");
  double simulated = 0;
  long requests = 0;
  for (auto _ : state) {
    const auto summary = runSimulation(s, {});
    simulated += summary.sim_seconds;
    requests += summary.total;
  }
  state.counters["sim_s_per_wall_s"] = benchmark::Counter(simulated, benchmark::Counter::kIsRate);
  state.counters["requests"] = static_cast<double>(requests) / static_cast<double>(state.iterations());
  state.counters["peak_rss_MiB"] = peakRssMiB();
}
BENCHMARK(BM_E3OneSimulatedHour)->Unit(benchmark::kMillisecond)->MinTime(3);

static void BM_ConversationTrace600Requests1P3D(benchmark::State& state) { conversationTrace(state, sampleTrace()); }
BENCHMARK(BM_ConversationTrace600Requests1P3D)->Unit(benchmark::kMillisecond)->MinTime(3);

// The whole trace (12,031 requests), as before the samples were vendored; skipped with a message
// when KVSCOPE_TRACE_DIR is unset.
static void BM_ConversationTrace1P3D(benchmark::State& state) {
  const std::string trace = wholeTrace();
  if (trace.empty()) {
    state.SkipWithError("KVSCOPE_TRACE_DIR is not set (the folder holding Mooncake's conversation_trace.jsonl)");
    return;
  }
  conversationTrace(state, trace);
}
BENCHMARK(BM_ConversationTrace1P3D)->Unit(benchmark::kMillisecond)->MinTime(3);

// The lab's metrics (LabMetricsCollector) and the whole summary (which holds them) folding one e3
// hour's events: their share of a run's cost. (The prefix ceilings are computed in
// the simulator and are inside BM_E3OneSimulatedHour's figure.)
struct Keep : EventSink {
  std::vector<Event> events;
  void onEvent(const Event& e) override { events.push_back(e); }
};
const std::vector<Event>& e3Events() {
  static const std::vector<Event> events = [] {
    Keep keep;
    SimulationOptions o;
    o.sinks = {&keep};
    runSimulation(Scenario::load("e3-load-floor"), o);
    return std::move(keep.events);
  }();
  return events;
}
template <class Collector>
void foldE3(benchmark::State& state) {
  const auto& events = e3Events();
  for (auto _ : state) {
    Collector c;
    for (const Event& e : events) c.onEvent(e);
    benchmark::DoNotOptimize(c);
  }
  state.counters["events"] = static_cast<double>(events.size());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events.size()), benchmark::Counter::kIsIterationInvariantRate);
}
static void BM_LabMetricsFoldE3Hour(benchmark::State& state) { foldE3<LabMetricsCollector>(state); }
BENCHMARK(BM_LabMetricsFoldE3Hour)->Unit(benchmark::kMillisecond);
static void BM_SummaryFoldE3Hour(benchmark::State& state) { foldE3<SummaryCollector>(state); }
BENCHMARK(BM_SummaryFoldE3Hour)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
