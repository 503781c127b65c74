#include "bench/CompareViewBench.h"

#include <QApplication>
#include <QElapsedTimer>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include "app/gui/MainWindow.h"
#include "app/gui/PanelDocks.h"
#include "bench/BenchStats.h"
#include "bench/PeakRss.h"
#include "bench/SyntheticEventSource.h"
#include "core/telemetry/ComparedRun.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/TelemetryPanel.h"
#include "widgets/common/ViewState.h"

namespace kvscope::bench {

namespace {
double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// One operator step per frame, in a cycle: pan later, zoom in about the middle, pan earlier, zoom
// out; the cursor walks across the range.
void step(ViewState& view, int frame) {
  const SimTime mid = view.from() + (view.to() - view.from()) / 2;
  switch (frame % 4) {
    case 0:
      view.panBy(0.02);
      break;
    case 1:
      view.zoomAbout(mid, 0.25);
      break;
    case 2:
      view.panBy(-0.02);
      break;
    default:
      view.zoomAbout(mid, -0.25);
      break;
  }
  const SimTime span = view.to() - view.from();
  view.setCursorTime(view.from() + span * (frame % 100) / 100);
}

void phase(const char* name, MainWindow& window, int frames) {
  Stats refresh_ms, paint_ms, total_ms;
  TelemetryStore& store = window.session().store();
  for (int f = 0; f < frames; ++f) {
    step(window.view(), f);
    const auto t0 = std::chrono::steady_clock::now();
    window.docks().refresh(store);
    const double refresh = msSince(t0);
    const auto t1 = std::chrono::steady_clock::now();
    QApplication::processEvents();  // the paint the refresh asked for (UpdateRequest)
    const double paint = msSince(t1);
    refresh_ms.add(refresh);
    paint_ms.add(paint);
    total_ms.add(refresh + paint);
  }
  // Where a frame's refresh goes: each visible panel's refresh() alone, after the frames (the same
  // steps again, so the view moves as it did).
  std::map<QString, Stats> panel_ms;
  for (int f = 0; f < std::min(frames, 200); ++f) {
    step(window.view(), f);
    for (TelemetryPanel* p : window.docks().panels()) {
      if (!p->isVisible() || p->visibleRegion().isEmpty()) continue;
      const auto t0 = std::chrono::steady_clock::now();
      p->refreshNow(store);
      panel_ms[p->objectName()].add(msSince(t0));
    }
  }
  std::printf("\n== %s: %d frames, each a pan, zoom and cursor move over the view ==\n", name, frames);
  for (auto& [panel, ms] : panel_ms) std::printf("  refresh of %-12s %s\n", qPrintable(panel), ms.line().c_str());
  std::printf("refresh (visible panels): %s\n", refresh_ms.line().c_str());
  std::printf("paint (events after it):  %s\n", paint_ms.line().c_str());
  std::printf("frame + paint:            %s\n", total_ms.line().c_str());
  std::printf("verdict: frame + paint p99 %.2f ms %s 16 ms\n", total_ms.pct(99), total_ms.pct(99) < 16 ? "<" : ">=");
  std::fflush(stdout);
}
}  // namespace

int runCompareViewBench(MainWindow& window, const CompareViewOptions& o) {
  SyntheticEventSource::Options a;
  a.decode = o.decode;
  a.prefill = o.prefill;
  a.events_per_sim_second = o.events_per_sim_second;
  const SimTime length = secondsToTime(o.hours * 3600);
  QElapsedTimer made;
  made.start();
  TelemetryStore& store = window.session().store();
  SyntheticEventSource::fillStore(a, length, store);
  std::printf("compare view: run A %llu events, %.0f simulated s, %d P + %d D, made in %.1f s\n",
              static_cast<unsigned long long>(store.eventCount()), timeToSeconds(store.now()), o.prefill, o.decode,
              static_cast<double>(made.restart()) / 1000);
  auto run = std::make_shared<ComparedRun>();
  run->name_a = "synthetic A";
  run->name_b = "synthetic B";
  SyntheticEventSource::Options b = a;
  b.seed = a.seed + 1;
  SyntheticEventSource::fillStore(b, length, run->store_b);
  std::printf("compare view: run B %llu events, %.0f simulated s, made in %.1f s; window %dx%d\n",
              static_cast<unsigned long long>(run->store_b.eventCount()), timeToSeconds(run->store_b.now()),
              static_cast<double>(made.elapsed()) / 1000, window.width(), window.height());
  window.view().setRange(0, length);
  window.docks().refresh(store, /*force=*/true);
  QApplication::processEvents();
  phase("one run (A)", window, o.frames);
  window.view().setRange(0, length);
  window.view().setComparison(std::move(run));
  window.docks().refresh(store, /*force=*/true);
  QApplication::processEvents();
  phase("two runs compared (A solid, B dashed, KV A - B)", window, o.frames);
  std::printf("\nrss at the end: %.1f MB (peak %.1f MB)\n", procStatusMb("VmRSS"), procStatusMb("VmHWM"));
  return 0;
}

}  // namespace kvscope::bench
