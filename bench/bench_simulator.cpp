// Simulated seconds per wall second on e3-load-floor (one simulated hour), wall time of the whole
// Mooncake conversation trace on 1P+3D, and the process's peak memory after each.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include "run/SimulationRun.h"

using namespace kvscope;

namespace {
double peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}
const std::string kData = KVSCOPE_SHARED_DATA_DIR;
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

static void BM_ConversationTrace1P3D(benchmark::State& state) {
  Scenario s = Scenario::load("e3-load-floor");
  s.workload.replay = ReplayMode::OpenLoop;
  SimulationOptions o;
  o.trace = kData + "/traces/conversation_trace.jsonl";
  long requests = 0;
  for (auto _ : state) requests += runSimulation(s, o).total;
  state.counters["requests"] = static_cast<double>(requests) / static_cast<double>(state.iterations());
  state.counters["peak_rss_MiB"] = peakRssMiB();
}
BENCHMARK(BM_ConversationTrace1P3D)->Unit(benchmark::kMillisecond)->MinTime(3);

BENCHMARK_MAIN();
