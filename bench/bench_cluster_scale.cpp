// The twin at production size: the many-workers workload (agentic sessions, 12K-token shared
// boilerplate, session-level eviction, kv-aware K=200) on 3, 64, 256 and 512 decode workers with the
// sessions scaled alongside (1,000 per 64 D) and one prefill worker per 4 D (at most 64). Each size
// runs in its own process, so its peak RSS is its own. Prints, per size: simulated requests, wall
// time, microseconds per simulated request, the wall time one simulated hour would take, peak RSS,
// and the bytes per resident block of the router's prefix index and of the KV pools' bookkeeping.
//
// The last line is the ratio of the largest size's cost per request to the smallest's (the issue's
// "flat cost": within 1.5x). `--index per-block` runs the router on the per-block prefix index
// instead of the per-run one (the A/B of the chain-level state).
//
//   bench_cluster_scale [--decode 3,64,256,512] [--duration 3600] [--sessions-per-64d 1000]
//                       [--index chain|per-block]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "bench/PeakRss.h"
#include "core/metrics/RunAnalysis.h"
#include "core/run/HugePageHeap.h"
#include "core/run/SimulationRun.h"
#include "core/sim/ClusterSimulator.h"

using namespace kvscope;
using kvscope::bench::peakRssMiB;

namespace {

// Prints the row and returns microseconds per simulated request (through a pipe from the child).
double runOne(int decode, double duration_s, double sessions_per_64d, TwinOptions options) {
  Scenario s = Scenario::load("many-workers");
  s.decode_workers = decode;
  s.prefill_workers = std::clamp(decode / 4, 1, kMaxPrefillWorkers);
  s.workload.synthetic.sessions = std::max(1, static_cast<int>(sessions_per_64d * decode / 64.0 + 0.5));
  // The sessions start over the same share of the run as the scenario's (300 s of its hour).
  s.duration_s = duration_s;
  s.workload.synthetic.start_window_s = std::min(s.workload.synthetic.start_window_s, duration_s / 2);
  const auto t0 = std::chrono::steady_clock::now();
  auto [scenario, workload] = prepareRun(s, {});
  ClusterSimulator sim(scenario, std::move(workload), scenario.seed, options);
  RunAnalysis analysis;  // what `kvscope-cli simulate` keeps: the summary and the diagnosis
  sim.addSink(&analysis);
  sim.start();
  sim.run();
  const ClusterSimulator::MemoryUse mem = sim.memoryUse();
  sim.finish(true);
  const RunSummary summary = analysis.summary();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double requests = static_cast<double>(std::max<long>(1, summary.total));
  std::printf("%5d %4d %8d %9ld %8.1f %9.2f %10.1f %12.2f %9.0f %11.1f %10.1f %11zu\n", decode,
              scenario.prefill_workers, scenario.workload.synthetic.sessions, summary.total, summary.sim_seconds, wall,
              wall / requests * 1e6, wall * 3600.0 / std::max(1.0, summary.sim_seconds), peakRssMiB(),
              mem.index_blocks ? static_cast<double>(mem.index_bytes) / static_cast<double>(mem.index_blocks) : 0.0,
              mem.pool_blocks ? static_cast<double>(mem.pool_bytes) / static_cast<double>(mem.pool_blocks) : 0.0,
              mem.index_blocks);
  std::fflush(stdout);
  return wall / requests * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  relaunchWithHugePageHeap(argv);  // as kvscope-cli and the console do (KVSCOPE_HUGE_PAGES=0: without)
  std::vector<int> sizes{3, 64, 256, 512};
  double duration = 3600, per64 = 1000;
  TwinOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--decode" && has_value) {
      sizes.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::stoi(item));
    } else if (a == "--duration" && has_value) {
      duration = std::stod(argv[++i]);
    } else if (a == "--sessions-per-64d" && has_value) {
      per64 = std::stod(argv[++i]);
    } else if (a == "--index" && has_value &&
               (std::string(argv[i + 1]) == "chain" || std::string(argv[i + 1]) == "per-block")) {
      options.index = std::string(argv[++i]) == "chain" ? Router::IndexKind::Chain : Router::IndexKind::PerBlock;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--decode 3,64,256,512] [--duration SIMULATED_S] [--sessions-per-64d N] [--index "
                   "chain|per-block]\n",
                   argv[0]);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  for (int d : sizes)
    if (d < 1 || d > kMaxWorkers) {
      std::fprintf(stderr, "--decode: expected 1..%d decode workers, got %d\n", kMaxWorkers, d);
      return 2;
    }
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool huge = tunables && std::string(tunables).find("glibc.malloc.hugetlb=1") != std::string::npos;
  std::printf(
      "many-workers workload, %.0f simulated s, %.0f sessions per 64 D, one P per 4 D, %s prefix index, heap on %s\n",
      duration, per64, options.index == Router::IndexKind::Chain ? "per-run (chain)" : "per-block",
      huge ? "transparent huge pages" : "4 KiB pages");
  std::printf("%5s %4s %8s %9s %8s %9s %10s %12s %9s %11s %10s %11s\n", "D", "P", "sessions", "requests", "sim_s",
              "wall_s", "us/request", "wall_s/sim_h", "rss_MiB", "index_B/blk", "pool_B/blk", "index_blks");
  std::fflush(stdout);
  std::vector<std::pair<int, double>> costs;  // (D, us/request) of the sizes that ran
  for (int d : sizes) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      try {
        const double us = runOne(d, duration, per64, options);
        if (write(fds[1], &us, sizeof us) != static_cast<ssize_t>(sizeof us)) std::_Exit(1);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%d D: %s\n", d, e.what());
        std::_Exit(1);
      }
      std::_Exit(0);
    }
    close(fds[1]);
    double us = 0;
    const bool got = read(fds[0], &us, sizeof us) == static_cast<ssize_t>(sizeof us);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !got)
      std::printf("%5d  (failed: status %d)\n", d, status);
    else
      costs.emplace_back(d, us);
  }
  if (costs.size() >= 2) {
    const auto [lo, hi] = std::minmax_element(costs.begin(), costs.end());  // by D
    std::printf("us/request at %d D / at %d D: %.2fx\n", hi->first, lo->first, hi->second / lo->second);
  }
  return 0;
}
