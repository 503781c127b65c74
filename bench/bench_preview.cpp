// What a what-if preview costs: forks a scenario (e3-load-floor, or the one named, e.g.
// many-workers for 16 P + 64 D) at several times, plays 10 simulated minutes without and with
// K=0, and prints the wall time of each (median of the repeats) with what the two futures differ
// in, the process's peak RSS, and its RSS once the futures are dropped and the heap trimmed (what
// the console keeps after Revert). Targets at 64 D (issue 34): preview < 1 s and < 300 MB.
//   bench_preview [SCENARIO] [REPEATS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench/PeakRss.h"
#include "core/run/BackgroundWork.h"
#include "core/run/HugePageHeap.h"
#include "core/run/WhatIfPreview.h"
#include "core/scenario/Scenario.h"

using namespace kvscope;

namespace {
double currentRssMiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}
}  // namespace

int main(int argc, char** argv) {
  relaunchWithHugePageHeap(argv);  // as kvscope-cli and the console do
  const std::string scenario = argc > 1 ? argv[1] : "e3-load-floor";
  if (scenario == "--help" || scenario == "-h") {
    std::printf("usage: bench_preview [SCENARIO] [REPEATS]   (default e3-load-floor 5)\n");
    return 0;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  PreparedRun run;
  try {
    run = prepareRun(Scenario::load(scenario), {});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_preview: %s\n", e.what());
    return 2;
  }
  const double before = currentRssMiB();
  std::printf("bench_preview: %s, 10 simulated minutes without and with K=0, two threads, %d repeats; RSS %.0f MiB\n",
              scenario.c_str(), repeats, before);
  for (const double now_s : {100.0, 300.0, 1800.0}) {
    std::vector<double> wall;
    WhatIfResult last;
    {
      const WhatIfPreview preview(run, {});
      ControlStep change;
      change.knobs = {{"K", 0}};
      for (int i = 0; i < repeats; ++i) {
        last = preview.run(secondsToTime(now_s), secondsToTime(600), change);
        wall.push_back(last.wall_ms);
      }
    }
    std::sort(wall.begin(), wall.end());
    std::printf("fork at %5.0f s: wall median %7.1f ms (min %.1f, max %.1f)", now_s, wall[wall.size() / 2],
                wall.front(), wall.back());
    std::printf("  | requests %ld vs %ld, TTFT p90 %.2f vs %.2f s, evictions %ld vs %ld", last.without.horizon.total,
                last.with.horizon.total, last.without.horizon.ttft_s.p90, last.with.horizon.ttft_s.p90,
                last.without.horizon.eviction_count, last.with.horizon.eviction_count);
    last = WhatIfResult();
    giveFreeHeapBack();
    std::printf("  | peak RSS %.0f MiB, after Revert %.0f MiB\n", bench::peakRssMiB(), currentRssMiB());
  }
  return 0;
}
