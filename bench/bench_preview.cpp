// What a what-if preview costs ("a 10-minute preview of e3-load-floor in under
// 300 ms wall"): forks e3-load-floor at several times, plays 10 simulated minutes without and with
// K=0, and prints the wall time of each (median of 5) with what the two futures differ in.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/run/HugePageHeap.h"
#include "core/run/WhatIfPreview.h"
#include "core/scenario/Scenario.h"

using namespace kvscope;

int main(int, char** argv) {
  relaunchWithHugePageHeap(argv);  // as kvscope-cli and the console do
  const PreparedRun run = prepareRun(Scenario::load("e3-load-floor"), {});
  const WhatIfPreview preview(run, {});
  ControlStep change;
  change.knobs = {{"K", 0}};
  std::printf("bench_preview: e3-load-floor, 10 simulated minutes without and with K=0, two threads\n");
  for (const double now_s : {100.0, 300.0, 1800.0}) {
    std::vector<double> wall;
    WhatIfResult last;
    for (int i = 0; i < 5; ++i) {
      last = preview.run(secondsToTime(now_s), secondsToTime(600), change);
      wall.push_back(last.wall_ms);
    }
    std::sort(wall.begin(), wall.end());
    std::printf("fork at %5.0f s: wall median %7.1f ms (min %.1f, max %.1f)", now_s, wall[2], wall.front(),
                wall.back());
    std::printf("  | requests %ld vs %ld, TTFT p90 %.2f vs %.2f s, evictions %ld vs %ld\n", last.without.horizon.total,
                last.with.horizon.total, last.without.horizon.ttft_s.p90, last.with.horizon.ttft_s.p90,
                last.without.horizon.eviction_count, last.with.horizon.eviction_count);
  }
  return 0;
}
