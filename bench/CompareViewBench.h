#pragma once
// bench_console --compare: the compare view holding two whole runs (by default two 64-D hours), as
// an operator scrubs it. Run A is made straight into the window's store and run B into a
// ComparedRun (SyntheticEventSource::fillStore, another seed); the view shows the whole run. Then,
// frame after frame, the range pans and zooms a little and the cursor moves (a drag, a wheel, a
// hover), and each frame's panel refresh and the paint after it are timed: first with A alone, then
// with B compared, so the cost of the second run is the difference.
namespace kvscope {
class MainWindow;
}

namespace kvscope::bench {

struct CompareViewOptions {
  int decode = 64;
  int prefill = 1;
  double hours = 1;                    // of each run, and of the view
  double events_per_sim_second = 833;  // bench_console's 50K/s at 60 simulated s per wall s
  int frames = 600;                    // per phase
};

// Prints the numbers; returns 0.
int runCompareViewBench(MainWindow& window, const CompareViewOptions& options);

}  // namespace kvscope::bench
