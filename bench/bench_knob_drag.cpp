// A knob slider dragged in the real console while a run goes on (issue 34: at 64 D a K drag lagged
// up to 965 ms). The MainWindow (offscreen unless QT_QPA_PLATFORM says otherwise) runs the embedded
// --scenario (default many-workers: 16 P / 64 D) at --speed; after --warmup simulated seconds the
// --knob slider is held down and moved one step every 16 ms (a 60 Hz mouse), as a drag moves it.
// Printed: the drag-to-repaint latency (the slider's new position to the end of the window's next
// paint), then, after the release, the preview's time (release to the what-if table shown) and the
// process's resident memory before, at its peak and after the preview is reverted. With --pause
// the run is paused first, as the console offers when a knob is edited.
// Plain text output like the other bench_* programs; not run by CTest.
#include <QAbstractButton>
#include <QApplication>
#include <QCommandLineParser>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QScrollArea>
#include <QSlider>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/gui/MainWindow.h"
#include "app/gui/PanelDocks.h"
#include "app/gui/PreviewController.h"
#include "app/gui/WindowSize.h"
#include "bench/BenchOptions.h"
#include "bench/BenchStats.h"
#include "bench/PeakRss.h"
#include "core/run/HugePageHeap.h"
#include "core/run/WhatIfPreview.h"
#include "core/source/EmbeddedSimulationSource.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/RunSession.h"
#include "widgets/knobs/KnobsPanel.h"
#include "widgets/knobs/WhatIfPanel.h"
#include "widgets/knobs/WhatIfTable.h"

using namespace kvscope;
using kvscope::bench::procStatusMb;
using kvscope::bench::Stats;

namespace {

// Counts the window's paints: Qt Widgets repaints a top-level on QEvent::UpdateRequest.
class PaintCountingApplication : public QApplication {
 public:
  using QApplication::QApplication;
  std::uint64_t paints = 0;
  bool notify(QObject* receiver, QEvent* event) override {
    const bool r = QApplication::notify(receiver, event);
    if (event->type() == QEvent::UpdateRequest && receiver->isWidgetType() &&
        static_cast<QWidget*>(receiver)->isWindow())
      ++paints;
    return r;
  }
};

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Runs the event loop for `ms`, asleep between events as the console's exec() is (a loop of
// processEvents() calls spun a core, and the preview's fork threads had one core left).
void waitMs(int ms) {
  QEventLoop loop;
  QTimer::singleShot(std::max(0, ms), &loop, &QEventLoop::quit);
  loop.exec();
}

}  // namespace

int main(int argc, char** argv) {
  kvscope::relaunchWithHugePageHeap(argv);  // as the console does
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  PaintCountingApplication app(argc, argv);
  QApplication::setOrganizationName("KVScopeBench");  // a user's saved layout stays out of it
  QApplication::setApplicationName("bench_knob_drag");
  QCommandLineParser args;
  args.setApplicationDescription("KVScope console benchmark: a knob slider's drag-to-repaint latency and preview.");
  args.addHelpOption();
  args.addOptions({
      {"scenario", "Embedded scenario (default many-workers, 16 P / 64 D).", "NAME", "many-workers"},
      {"speed", "Simulated seconds per wall second (default 10, the console's pace).", "X", "10"},
      {"warmup", "Simulated seconds before the drag (default 120).", "S", "120"},
      {"steps", "Slider steps in the drag, one per 16 ms (default 120).", "N", "120"},
      {"knob", "The knob whose slider is dragged (default K).", "NAME", "K"},
      {"size", "Window size (default 1600x1000).", "WxH", "1600x1000"},
      {"end", "Where the drag ends, as a fraction of the slider's range (default 0.5), before the release.", "F",
       "0.5"},
      {"pause", "Pause the run before the drag, as the console offers when a knob is edited (Space)."},
  });
  args.process(app);
  auto number = [&](const char* name, double min) { return bench::numberOption(args, "bench_knob_drag", name, min); };
  const double speed = number("speed", 0.001), warmup = number("warmup", 0);
  const int steps = static_cast<int>(number("steps", 1));
  const double end_at = std::min(1.0, number("end", 0));
  const std::optional<QSize> size = parseWindowSize(args.value("size"));
  if (!size) {
    std::fprintf(stderr, "bench_knob_drag: --size: expected WIDTHxHEIGHT, got '%s'\n", qPrintable(args.value("size")));
    return 2;
  }

  MainWindow window(MainWindow::Layout::Default);
  window.setScreenshotSize(*size);  // the default layout at this size, whatever the screen
  window.showAtStart();
  std::unique_ptr<EmbeddedSimulationSource> source;
  try {
    source =
        std::make_unique<EmbeddedSimulationSource>(args.value("scenario").toStdString(), SimulationOptions{}, speed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_knob_drag: --scenario: %s\n", e.what());
    return 2;
  }
  window.openSource(std::move(source));
  const TelemetryStore& store = window.session().store();
  while (store.now() < secondsToTime(warmup) && !store.finished()) waitMs(50);
  if (args.isSet("pause")) {
    window.togglePause();
    while (!window.statusText().contains(QStringLiteral("paused"))) waitMs(20);
  }
  // The knobs in front, as an operator clicks their tab (where the layout tabs them with the
  // diagnosis), then a frame: a hidden panel is neither refreshed nor painted.
  if (auto* dock = window.findChild<QDockWidget*>(QStringLiteral("knobsDock"))) dock->raise();
  waitMs(200);
  auto* slider = window.findChild<QSlider*>(QStringLiteral("slider:") + args.value("knob"));
  if (slider) {  // and the slider in the knob list's view, as the operator scrolls to it
    if (auto* list = qobject_cast<QScrollArea*>(window.docks().knobs().findChild<QScrollArea*>()))
      list->ensureWidgetVisible(slider);
    waitMs(100);
  }
  if (!slider || !slider->isVisible()) {
    std::fprintf(stderr, "bench_knob_drag: --knob: no slider for '%s'\n", qPrintable(args.value("knob")));
    return 2;
  }
  const int workers = static_cast<int>(store.workers().size());
  std::printf("bench_knob_drag: %s, %d decode workers, %.0fx%s, window %dx%d, drag from simulated %.1f s\n",
              qPrintable(args.value("scenario")), workers, speed, args.isSet("pause") ? " (paused)" : "", size->width(),
              size->height(), timeToSeconds(store.now()));

  // The drag: one step of the slider per 16 ms; each step's latency is until the window's next
  // paint has ended (capped at 5 s).
  Stats repaint;
  const double rss_before = procStatusMb("VmRSS");
  slider->setSliderDown(true);
  const int span = std::max(1, slider->maximum() - slider->minimum());
  for (int i = 1; i <= steps; ++i) {
    const std::uint64_t painted = app.paints;
    const auto t0 = std::chrono::steady_clock::now();
    slider->setSliderPosition(slider->minimum() + (i * std::max(1, span / steps)) % (span + 1));
    while (app.paints == painted && msSince(t0) < 5000) QApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    repaint.add(msSince(t0));
    waitMs(std::max(0, 16 - static_cast<int>(msSince(t0))));
  }
  std::printf("drag repaint (slider moved -> window painted), %s run: %s\n", args.isSet("pause") ? "paused" : "live",
              repaint.line().c_str());

  // The drag ends where the operator stops (a step there, as a mouse makes it), and the release
  // previews that value.
  slider->setSliderPosition(slider->minimum() + static_cast<int>(std::lround(span * end_at)));
  waitMs(16);
  QElapsedTimer preview_time;
  bool shown = false;
  QObject::connect(&window.preview(), &PreviewController::previewShown, [&] { shown = true; });
  preview_time.start();
  slider->setSliderDown(false);
  while (!shown && preview_time.elapsed() < 30000) waitMs(5);
  if (!shown)  // (a release on the value the run has already is no change: nothing to preview)
    std::printf("no preview; the what-if panel says: %s\n", qPrintable(window.docks().whatIf().table().text()));
  const double preview_ms = static_cast<double>(preview_time.elapsed());
  const double rss_peak = procStatusMb("VmHWM");
  const double fork_ms = shown && window.preview().last() ? window.preview().last()->wall_ms : -1;
  window.docks().knobs().findChild<QAbstractButton*>(QStringLiteral("revert"))->click();
  waitMs(500);
  std::printf(
      "preview after release (release -> what-if shown): %s%.0f ms, of which the "
      "fork's two futures %.0f ms\n",
      shown ? "" : "not shown within ", preview_ms, fork_ms);
  std::printf("resident memory: %.0f MB before the drag, peak %.0f MB, %.0f MB after Revert\n", rss_before, rss_peak,
              procStatusMb("VmRSS"));
  return 0;
}
