// The console under load: the real MainWindow (1600x1000 or --size, offscreen unless
// QT_QPA_PLATFORM says otherwise) watching a synthetic source.
// 1. Live: --rate events/s (default 50K) for --seconds (default 60), appended every 2 ms. Per frame:
//    RunSession::lastFrameMs() (drain + ingest + every visible panel's refresh), the paint that
//    follows it (the window's UpdateRequest, timed in QApplication::notify), the interval between
//    frames, and the lag from a batch's arrival in the staging buffer to the end of the first frame
//    whose store holds its last event.
// 2. Memory: the source then produces as fast as the frame timer drains it (backlog bounded) until
//    --events-for-memory (default 10M) events were ingested; RSS and the store's own estimate at 1M
//    and at that count, and the ingest rate. The 1M mark usually falls in the live phase.
// 3. --compare (instead of 1 and 2): the compare view with two whole runs, scrubbed (CompareViewBench.h).
// Plain text output like the other bench_* programs; not run by CTest.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/gui/MainWindow.h"
#include "app/gui/PanelDocks.h"
#include "app/gui/WindowSize.h"
#include "bench/BenchOptions.h"
#include "bench/BenchStats.h"
#include "bench/CompareViewBench.h"
#include "bench/PeakRss.h"
#include "bench/SyntheticEventSource.h"
#include "core/run/HugePageHeap.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/TelemetryPanel.h"

using namespace kvscope;
using kvscope::bench::CompareViewOptions;
using kvscope::bench::procStatusMb;
using kvscope::bench::runCompareViewBench;
using kvscope::bench::Stats;
using kvscope::bench::SyntheticEventSource;

namespace {

std::int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Times the window's paint: Qt Widgets repaints a top-level on QEvent::UpdateRequest.
class BenchApplication : public QApplication {
 public:
  using QApplication::QApplication;
  bool recording = false;
  Stats paint_ms;
  double paint_since_frame_ms = 0;
  bool notify(QObject* receiver, QEvent* event) override {
    if (event->type() != QEvent::UpdateRequest || !receiver->isWidgetType() ||
        !static_cast<QWidget*>(receiver)->isWindow())
      return QApplication::notify(receiver, event);
    const std::int64_t start = nowNs();
    const bool r = QApplication::notify(receiver, event);
    const double ms = static_cast<double>(nowNs() - start) / 1e6;
    if (recording) paint_ms.add(ms);
    paint_since_frame_ms += ms;
    return r;
  }
};

template <std::size_t... I>
std::array<const char*, sizeof...(I)> kindNames(std::index_sequence<I...>) {
  return {eventKindName(EventPayload(std::in_place_index<I>))...};
}

}  // namespace

int main(int argc, char** argv) {
  kvscope::relaunchWithHugePageHeap(argv);  // as the console does
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  BenchApplication app(argc, argv);
  // Its own QSettings scope, so a user's saved layout neither applies here nor gets overwritten.
  QApplication::setOrganizationName("KVScopeBench");
  QApplication::setApplicationName("bench_console");

  QCommandLineParser args;
  args.setApplicationDescription("KVScope console benchmark: frame time, lag and memory under a synthetic source.");
  args.addHelpOption();
  args.addOptions({
      {"seconds", "Live phase length in wall seconds (default 60).", "S", "60"},
      {"rate", "Live phase events per wall second (default 50000).", "N", "50000"},
      {"events-for-memory", "Total events ingested before the memory reading ends the run (default 10000000).", "N",
       "10000000"},
      {"sim-speed", "Simulated seconds per wall second at --rate (default 10, the console's pace).", "X", "10"},
      {"decode", "Decode workers D0..D(N-1) (default 8, at most 512).", "N", "8"},
      {"prefill", "Prefill workers P0..P(M-1) (default 1, at most 64).", "M", "1"},
      {"memory-timeout", "Give up the memory phase after this many wall seconds (default 900).", "S", "900"},
      {"size",
       "Window size (default 1600x1000). The default layout tabs the side columns when a long worker "
       "strip leaves them too little height (64 D below ~1100 px): then the latency panel is hidden "
       "and not refreshed; 1600x1300 shows every panel.",
       "WxH", "1600x1000"},
      {"compare",
       "Instead of the live and memory phases: two whole runs of --compare-hours (default 1) with --decode "
       "workers in the compare view, panned, zoomed and hovered frame by frame; A alone, then A and B."},
      {"compare-hours", "With --compare: simulated hours of each run (default 1).", "H", "1"},
      {"panel-times",
       "Diagnosis: after each live frame, refresh every visible panel once more, timing each "
       "(adds work; the frame numbers then include it)."},
  });
  args.process(app);
  auto number = [&](const char* name, double min) { return bench::numberOption(args, "bench_console", name, min); };
  const double seconds = number("seconds", 0);
  const double rate = number("rate", 1);
  const auto events_for_memory = static_cast<std::uint64_t>(number("events-for-memory", 1));
  const double sim_speed = number("sim-speed", 0.001);
  const double memory_timeout = number("memory-timeout", 1);
  const bool panel_times = args.isSet("panel-times");
  const int decode = std::min(kMaxWorkers, static_cast<int>(number("decode", 1)));
  const int prefill = std::min(kMaxPrefillWorkers, static_cast<int>(number("prefill", 1)));

  const std::optional<QSize> size = parseWindowSize(args.value("size"));
  if (!size) {
    std::fprintf(stderr, "bench_console: --size: expected WIDTHxHEIGHT, at least 640x400, got '%s'\n",
                 qPrintable(args.value("size")));
    return 2;
  }
  MainWindow window;
  window.resize(*size);
  window.show();
  {
    QElapsedTimer settle;
    settle.start();
    while (settle.elapsed() < 300) QApplication::processEvents(QEventLoop::AllEvents, 50);
  }
  if (args.isSet("compare")) {
    CompareViewOptions compare;
    compare.decode = decode;
    compare.prefill = prefill;
    compare.hours = number("compare-hours", 0.001);
    compare.events_per_sim_second = rate / sim_speed;
    return runCompareViewBench(window, compare);
  }
  const double rss_idle = procStatusMb("VmRSS");

  SyntheticEventSource::Options opts;
  opts.rate = rate;
  opts.events_per_sim_second = rate / sim_speed;
  opts.decode = decode;
  opts.prefill = prefill;
  auto owned = std::make_unique<SyntheticEventSource>(opts);
  SyntheticEventSource* source = owned.get();
  RunSession& session = window.session();
  const TelemetryStore& store = session.store();

  std::printf("bench_console: synthetic source (%d P + %d D, kv-aware), MainWindow %dx%d on the '%s' platform\n",
              prefill, decode, window.width(), window.height(), qPrintable(QGuiApplication::platformName()));
  std::printf(
      "live: %.0f events/s for %.0f s in 2 ms batches, %.0f events per simulated s (%.1f simulated s per wall s)\n",
      rate, seconds, opts.events_per_sim_second, sim_speed);
  std::printf("rss idle (window shown, no source): %.1f MB\n", rss_idle);
  std::fflush(stdout);

  // --panel-times: per-panel refresh cost.
  std::map<QString, Stats> panel_ms;

  enum class Phase { Live, Memory, Done } phase = Phase::Live;
  Stats frame_ms, paint_ms, interval_ms, lag_ms, batch_sizes;
  std::vector<double> frame_cost, paint_after;  // per live frame; -1 = not known
  std::vector<double> frame_at_s;               // per live frame: wall seconds since the start
  std::deque<SyntheticEventSource::Push> pushes;
  std::int64_t start_ns = 0, last_frame_ns = 0, live_end_ns = 0, mem_start_ns = 0, end_ns = 0;
  std::uint64_t live_frames = 0, live_events = 0, live_backlog_end = 0, mem_start_events = 0, mem_frames = 0;
  double live_sim_s = 0, live_cpu_s = 0, cpu_start = 0, rss_live_end = 0, approx_live_end = 0;
  struct Mark {
    std::uint64_t events;
    bool done = false;
    double rss = 0, hwm = 0, approx = 0, at_s = 0, sim_s = 0;
    std::uint64_t staged = 0, discrete = 0, dropped = 0;
    const char* phase = "";
  };
  std::vector<Mark> marks;
  // 1M, then every 5M: whether memory levels off shows in the steps, not in one end point.
  if (events_for_memory > 1'000'000) marks.push_back({1'000'000});
  for (std::uint64_t at = 5'000'000; at < events_for_memory; at += 5'000'000) marks.push_back({at});
  marks.push_back({events_for_memory});
  bool timed_out = false;
  SyntheticEventSource::KindCounts final_kinds{};

  // After MainWindow::onFrame (connected first), so the panels have refreshed: "the end of the frame".
  QObject::connect(&session, &RunSession::frame, &app, [&] {
    const std::int64_t now = nowNs();
    const std::uint64_t last_seq = store.lastSeq();
    const std::uint64_t events = store.eventCount();
    source->acknowledge(events);
    source->takePushes(pushes);
    while (!pushes.empty() && pushes.front().last_seq <= last_seq) {
      if (phase == Phase::Live) lag_ms.add(static_cast<double>(now - pushes.front().wall_ns) / 1e6);
      pushes.pop_front();
    }
    if (phase == Phase::Live) {
      ++live_frames;
      batch_sizes.add(session.lastBatchSize());
      if (last_frame_ns) interval_ms.add(static_cast<double>(now - last_frame_ns) / 1e6);
      // What was painted since the previous frame's end belongs to the previous frame.
      if (panel_times) {
        for (TelemetryPanel* p : window.docks().panels()) {
          if (!p->isVisible() || p->visibleRegion().isEmpty()) continue;
          const std::int64_t t0 = nowNs();
          p->refresh(store);
          panel_ms[p->objectName()].add(static_cast<double>(nowNs() - t0) / 1e6);
        }
      }
      if (live_frames > 1) paint_after[live_frames - 2] = app.paint_since_frame_ms;
      app.paint_since_frame_ms = 0;
      frame_cost.push_back(-1);
      frame_at_s.push_back(static_cast<double>(now - start_ns) / 1e9);
      paint_after.push_back(-1);
      // RunSession sets lastFrameMs after the frame signal returns: read it once drainNow is done.
      QTimer::singleShot(0, &app, [&, frame = live_frames] { frame_cost[frame - 1] = session.lastFrameMs(); });
    } else if (phase == Phase::Memory) {
      ++mem_frames;
    }
    last_frame_ns = now;
    const double wall_s = static_cast<double>(now - start_ns) / 1e9;
    for (Mark& m : marks) {
      if (m.done || events < m.events) continue;
      m.done = true;
      m.rss = procStatusMb("VmRSS");
      m.hwm = procStatusMb("VmHWM");
      m.approx = static_cast<double>(store.approxMemoryBytes()) / 1048576.0;
      m.at_s = wall_s;
      m.sim_s = timeToSeconds(store.now());
      m.staged = source->produced() - events;
      m.discrete = store.discreteEvents().size();
      m.dropped = store.droppedEvents();
      m.phase = phase == Phase::Live ? "live phase" : "memory phase";
    }
    if (phase == Phase::Live && wall_s >= seconds) {
      phase = Phase::Memory;
      live_end_ns = mem_start_ns = now;
      live_events = events;
      live_backlog_end = source->produced() - events;
      live_sim_s = timeToSeconds(store.now());
      live_cpu_s = threadCpuSeconds() - cpu_start;
      rss_live_end = procStatusMb("VmRSS");
      approx_live_end = static_cast<double>(store.approxMemoryBytes()) / 1048576.0;
      mem_start_events = events;
      app.recording = false;
      source->setRate(0);
      std::printf("live phase done after %.1f s; memory phase: as fast as the frame timer drains\n", wall_s);
      std::fflush(stdout);
    }
    const bool all_marks = std::all_of(marks.begin(), marks.end(), [](const Mark& m) { return m.done; });
    timed_out = phase == Phase::Memory && static_cast<double>(now - mem_start_ns) / 1e9 > memory_timeout;
    if (phase == Phase::Memory && (all_marks || timed_out)) {
      phase = Phase::Done;
      end_ns = now;
      final_kinds = source->kindCounts();
      // exit(), not quit(): Qt 6's quit() closes the window first, whose closeEvent() destroys the
      // source and saves the layout to QSettings.
      QTimer::singleShot(0, &app, [] { QApplication::exit(0); });
    }
  });

  start_ns = nowNs();
  cpu_start = threadCpuSeconds();
  app.recording = true;
  window.openSource(std::move(owned));
  QApplication::exec();
  const std::uint64_t final_events = store.eventCount();
  const double rss_end = procStatusMb("VmRSS"), hwm_end = procStatusMb("VmHWM");
  const auto& kinds = final_kinds;
  session.close();  // stops the producer and destroys the source

  // The GUI thread's cost of one frame: its drain + ingest + refresh and the paint after it.
  Stats gui_ms;
  for (std::size_t i = 0; i < frame_cost.size(); ++i) {
    if (frame_cost[i] >= 0) frame_ms.add(frame_cost[i]);
    if (frame_cost[i] >= 0 && paint_after[i] >= 0) gui_ms.add(frame_cost[i] + paint_after[i]);
  }
  paint_ms = app.paint_ms;

  const double live_s = static_cast<double>(live_end_ns - start_ns) / 1e9;
  std::printf("\n== live phase: %.0f events/s requested for %.1f s ==\n", rate, live_s);
  std::printf("frames: %llu in %.1f s = %.1f fps (timer 33 ms)\n", static_cast<unsigned long long>(live_frames), live_s,
              static_cast<double>(live_frames) / live_s);
  std::printf("frame time (RunSession::lastFrameMs: drain + ingest + visible panels' refresh): %s\n",
              frame_ms.line().c_str());
  {
    // The charts' x axis stands still until the run is longer than the live window (300 simulated
    // s), then moves every frame: the per-window split shows both regimes.
    const double step = live_s > 30 ? 10 : std::max(1.0, std::ceil(live_s / 3));
    for (double from = 0; from < live_s - 0.5; from += step) {
      Stats w;
      for (std::size_t i = 0; i < frame_cost.size(); ++i)
        if (frame_cost[i] >= 0 && frame_at_s[i] >= from && frame_at_s[i] < from + step) w.add(frame_cost[i]);
      std::printf("  frame time, wall %3.0f-%3.0f s: %s\n", from, std::min(from + step, live_s), w.line().c_str());
    }
  }
  {
    // When the slowest frames came: in a run's first half second (the store's memory touched for
    // the first time) or all along.
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < frame_cost.size(); ++i)
      if (frame_cost[i] >= 0) order.push_back(i);
    const std::size_t shown = std::min<std::size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end(),
                      [&](std::size_t a, std::size_t b) { return frame_cost[a] > frame_cost[b]; });
    std::printf("  slowest frames:");
    for (std::size_t k = 0; k < shown; ++k)
      std::printf("%s %.1f ms at %.1f s", k ? "," : "", frame_cost[order[k]], frame_at_s[order[k]]);
    std::printf("\n");
  }
  std::printf("paint (window UpdateRequest, after the frame): %s\n", paint_ms.line().c_str());
  std::printf("frame + its paint (GUI thread per frame): %s\n", gui_ms.line().c_str());
  std::printf("frame interval: %s\n", interval_ms.line().c_str());
  std::printf("events per frame: %s\n", batch_sizes.line("events").c_str());
  std::printf("events ingested: %llu (%.0f/s), still staged at the end: %llu\n",
              static_cast<unsigned long long>(live_events), static_cast<double>(live_events) / live_s,
              static_cast<unsigned long long>(live_backlog_end));
  std::printf("simulated time: %.1f s (%.1f simulated s per wall s)\n", live_sim_s, live_sim_s / live_s);
  std::printf("lag, arrival in staging -> end of the first frame that ingested it: %s\n", lag_ms.line().c_str());
  std::printf("GUI thread CPU: %.1f s of %.1f s (%.0f%%)\n", live_cpu_s, live_s, 100.0 * live_cpu_s / live_s);
  std::printf("memory at the end of the live phase: RSS %.1f MB, store approx %.1f MB\n", rss_live_end,
              approx_live_end);
  std::printf("verdict: frame p99 %.2f ms %s 33 ms; frame + paint p99 %.2f ms %s 33 ms\n", frame_ms.pct(99),
              frame_ms.pct(99) < 33 ? "<" : ">=", gui_ms.pct(99), gui_ms.pct(99) < 33 ? "<" : ">=");

  if (panel_times) {
    std::printf("--panel-times: each visible panel's refresh(), called again after the frame:\n");
    for (auto& [name, stats] : panel_ms) std::printf("  %-12s %s\n", qPrintable(name), stats.line().c_str());
  }

  const double mem_s = static_cast<double>(end_ns - mem_start_ns) / 1e9;
  std::printf("\n== memory phase: as fast as possible until %llu events ingested ==\n",
              static_cast<unsigned long long>(events_for_memory));
  if (timed_out) std::printf("TIMED OUT after %.0f s (--memory-timeout)\n", mem_s);
  if (mem_frames == 0)  // the live phase ingested that many already: no rate to speak of
    std::printf("reached during the live phase (%llu events ingested then)\n",
                static_cast<unsigned long long>(mem_start_events));
  else
    std::printf("ingested %llu events in %.1f s = %.0f events/s (%llu frames, %.1f fps)\n",
                static_cast<unsigned long long>(final_events - mem_start_events), mem_s,
                static_cast<double>(final_events - mem_start_events) / std::max(mem_s, 1e-9),
                static_cast<unsigned long long>(mem_frames), static_cast<double>(mem_frames) / std::max(mem_s, 1e-9));
  for (const Mark& m : marks) {
    if (!m.done) {
      std::printf("memory at %llu events: not reached\n", static_cast<unsigned long long>(m.events));
      continue;
    }
    std::printf(
        "memory at %llu events: RSS %.1f MB (peak %.1f MB), store approx %.1f MB; at %.1f s wall (%s), "
        "%.0f simulated s; staged-not-ingested %llu; discrete held %llu, dropped %llu\n",
        static_cast<unsigned long long>(m.events), m.rss, m.hwm, m.approx, m.at_s, m.phase, m.sim_s,
        static_cast<unsigned long long>(m.staged), static_cast<unsigned long long>(m.discrete),
        static_cast<unsigned long long>(m.dropped));
  }
  std::printf("memory at the end (%llu events): RSS %.1f MB, peak %.1f MB\n",
              static_cast<unsigned long long>(final_events), rss_end, hwm_end);

  static const auto names = kindNames(std::make_index_sequence<std::variant_size_v<EventPayload>>{});
  std::uint64_t total = 0;
  for (auto n : kinds) total += n;
  std::printf("\nevent mix (%llu produced):", static_cast<unsigned long long>(total));
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i])
      std::printf(" %s %.2f%% (%llu)", names[i], 100.0 * static_cast<double>(kinds[i]) / static_cast<double>(total),
                  static_cast<unsigned long long>(kinds[i]));
  std::printf("\n");
  return 0;
}
