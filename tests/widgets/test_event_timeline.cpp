// The event timeline (panel 3) over real simulator runs: what it paints can be hit and
// clicked, filters hide a kind, zoom and pan move the shared range, another panel's selection
// scrolls it into view, and a storm of 200K events is folded into a bounded number of glyphs.
#include <QtTest>

#include <QAction>
#include <QScrollArea>
#include <QToolButton>
#include <QWheelEvent>

#include <map>
#include <memory>

#include "core/telemetry/ColumnGrid.h"
#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"
#include "widgets/common/ViewState.h"
#include "widgets/timeline/EventTimelinePanel.h"
#include "widgets/timeline/EventTimelineView.h"

using namespace kvscope;
using namespace kvscope::test;

Q_DECLARE_METATYPE(kvscope::TimelineKind)

namespace {

// A bundled scenario run to its end and folded into a store, once per test run.
const TelemetryStore& storeFor(const QString& scenario) {
  static std::map<QString, std::unique_ptr<TelemetryStore>> cache;
  auto& slot = cache[scenario];
  if (!slot) {
    EventLog log;
    simulate(scenario.toStdString(), {}, {}, &log);
    slot = std::make_unique<TelemetryStore>();
    slot->ingest(log.events);
  }
  return *slot;
}

const Event* firstOf(const TelemetryStore& store, TimelineKind kind) {
  for (const Event& e : store.discreteEvents())
    if (timelineKindOf(e) == kind) return &e;
  return nullptr;
}

QPoint paintedAt(const EventTimelineView& view, const TelemetryStore& store, const Event& e) {
  return {view.xForTime(e.time), view.rowCenterY(store.rowOf(e))};
}

bool showPanel(QWidget& panel) {
  panel.resize(1600, 300);
  panel.show();
  return QTest::qWaitForWindowExposed(&panel);
}

void sendWheel(QWidget* w, QPoint at, int notches) {
  QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, notches * 120), Qt::NoButton, Qt::NoModifier,
                Qt::NoScrollPhase, false);
  QApplication::sendEvent(w, &e);
}

void sendMouse(QWidget* w, QEvent::Type type, QPoint at, Qt::MouseButtons buttons) {
  const Qt::MouseButton button = type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton;
  QMouseEvent e(type, at, w->mapToGlobal(at), button, buttons, Qt::NoModifier);
  QApplication::sendEvent(w, &e);
}

}  // namespace

class TestEventTimeline : public QObject {
  Q_OBJECT
 private slots:
  // Each glyph folds exactly the events of its row in its bin (the chart columns it spans), shows
  // the most severe of them, and no event in range goes without a glyph: at several sizes and
  // ranges, against a brute-force pass over the store's events.
  void glyphsAreTheEventsOfTheirCell_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<int>("width");
    QTest::addColumn<double>("from_s");
    QTest::addColumn<double>("to_s");
    QTest::newRow("evict-storm, whole run, 1600 px") << "evict-storm" << 1600 << 0.0 << 3600.0;
    QTest::newRow("evict-storm, a minute, 900 px") << "evict-storm" << 900 << 600.0 << 660.0;
    QTest::newRow("cascade, whole run, 700 px") << "cascade" << 700 << 0.0 << 3600.0;
    QTest::newRow("invariant-crash, zoomed out, 1200 px") << "invariant-crash" << 1200 << 0.0 << 9000.0;
  }
  void glyphsAreTheEventsOfTheirCell() {
    QFETCH(QString, scenario);
    QFETCH(int, width);
    QFETCH(double, from_s);
    QFETCH(double, to_s);
    const TelemetryStore& store = storeFor(scenario);
    ViewState view;
    EventTimelinePanel panel(view);
    panel.resize(width, 300);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    view.setRange(secondsToTime(from_s), secondsToTime(to_s));
    panel.refresh(store);
    EventTimelineView* timeline = panel.timeline();
    const ColumnGrid grid{view.from(), view.to(), timeline->plotRect().width()};
    const int bins = (grid.columns + EventTimelineView::kBinPx - 1) / EventTimelineView::kBinPx;
    struct Expected {
      long count = 0;
      int severity = -1;
    };
    std::map<std::pair<int, int>, Expected> expected;
    for (const Event& e : store.discreteEvents()) {
      if (e.time < view.from() || e.time > view.to()) continue;
      const auto kind = timelineKindOf(e);
      if (!kind || !timeline->kindVisible(*kind)) continue;
      const int bin = std::min(grid.columnOf(e.time) / EventTimelineView::kBinPx, bins - 1);
      for (const int row : {store.rowOf(e), store.prefillRowOf(e)}) {
        if (row < 0) continue;
        Expected& x = expected[{row, bin}];
        ++x.count;
        x.severity = std::max(x.severity, timelineKindSeverity(*kind));
      }
    }
    std::map<std::pair<int, int>, Expected> drawn;
    for (const auto& g : timeline->drawnGlyphs()) {
      QVERIFY2(!drawn.count({g.row, g.bin}), "two glyphs in one cell");
      drawn[{g.row, g.bin}] = {g.count, timelineKindSeverity(g.kind)};
    }
    QVERIFY(!expected.empty());
    QCOMPARE(drawn.size(), expected.size());
    for (const auto& [cell, x] : expected) {
      const auto it = drawn.find(cell);
      QVERIFY2(it != drawn.end(),
               qPrintable(QStringLiteral("row %1 bin %2: no glyph").arg(cell.first).arg(cell.second)));
      QCOMPARE(it->second.count, x.count);
      QCOMPARE(it->second.severity, x.severity);
    }
  }

  void hitTestFindsTheEventWhereItIsPainted_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<TimelineKind>("kind");
    QTest::newRow("invariant-crash: crash") << "invariant-crash" << TimelineKind::Crash;
    QTest::newRow("invariant-crash: correction") << "invariant-crash" << TimelineKind::Correction;
    QTest::newRow("cascade: link dead") << "cascade" << TimelineKind::LinkDead;
    QTest::newRow("evict-storm: eviction") << "evict-storm" << TimelineKind::Eviction;
    QTest::newRow("evict-storm: reseed") << "evict-storm" << TimelineKind::Reseed;
  }
  void hitTestFindsTheEventWhereItIsPainted() {
    QFETCH(QString, scenario);
    QFETCH(TimelineKind, kind);
    const TelemetryStore& store = storeFor(scenario);
    const Event* target = firstOf(store, kind);
    QVERIFY2(target, "the scenario produced no event of this kind");

    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    view.setRange(target->time - secondsToTime(2), target->time + secondsToTime(2));
    panel.refresh(store);
    EventTimelineView* timeline = panel.timeline();
    // A correction crashes its worker in the same microsecond, an eviction comes with the reseed
    // it causes: a crowded cell shows its most severe event, so the others are looked at alone.
    if (kind != TimelineKind::Crash)
      for (int k = 0; k < kTimelineKinds; ++k)
        panel.filterAction(static_cast<TimelineKind>(k))->setChecked(k == int(kind));
    const QPoint at = paintedAt(*timeline, store, *target);

    const auto hit = timeline->hitTest(at);
    QVERIFY(hit);
    QCOMPARE(timelineKindOf(*hit), std::optional(kind));
    // Same-kind events at one instant share a glyph (the largest eviction shows); otherwise it is ours.
    QVERIFY(hit->seq == target->seq || hit->time == target->time);
    if (kind == TimelineKind::Crash) QCOMPARE(hit->seq, target->seq);
    QVERIFY(!timeline->hitTest(QPoint(2, at.y())));  // the row labels are not events
    QVERIFY(timeline->toolTipAt(at).contains(describeTimelineEvent(*hit, &store)));

    QSignalSpy selected(&view, &ViewState::eventSelected);
    QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).value<std::uint64_t>(), hit->seq);
    QCOMPARE(selected.at(0).at(1).value<SimTime>(), hit->time);
    QCOMPARE(timeline->highlightedSeq(), hit->seq);
    QVERIFY(panel.detailsText().contains(QStringLiteral("seq: %1\n").arg(hit->seq)));
    QVERIFY(panel.detailsText().contains(
        QStringLiteral("kind: %1\n").arg(QString::fromLatin1(eventKindName(hit->payload)))));
  }

  // The P row is the prefill worker's: every seed it prefilled is there as well as on its D row.
  void aSeedShowsOnItsPrefillRowToo() {
    const TelemetryStore& store = storeFor("e3-load-floor");
    const Event* seed = firstOf(store, TimelineKind::Seed);
    QVERIFY2(seed, "e3-load-floor produced no seed");
    const int prefill_row = store.prefillRowOf(*seed);
    QVERIFY(prefill_row >= 0);
    QCOMPARE(store.timelineRows()[static_cast<std::size_t>(prefill_row)].kind, TimelineRow::Prefill);
    QVERIFY(prefill_row != store.rowOf(*seed));
    QCOMPARE(store.prefillRowOf(Event{0, seed->time, Eviction{0, 1, 100, EvictionGranularity::Session, 1}}), -1);

    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    view.setRange(seed->time - secondsToTime(1), seed->time + secondsToTime(1));
    for (int k = 0; k < kTimelineKinds; ++k)
      panel.filterAction(static_cast<TimelineKind>(k))->setChecked(k == int(TimelineKind::Seed));
    panel.refresh(store);
    EventTimelineView* timeline = panel.timeline();
    for (const int row : {store.rowOf(*seed), prefill_row}) {
      const auto hit = timeline->hitTest(QPoint(timeline->xForTime(seed->time), timeline->rowCenterY(row)));
      QVERIFY2(hit, qPrintable(QString("nothing on row %1").arg(row)));
      QCOMPARE(timelineKindOf(*hit), std::optional(TimelineKind::Seed));
      QCOMPARE(hit->time, seed->time);
    }
  }

  void crashDetailsCarryTheAssertion() {
    const TelemetryStore& store = storeFor("invariant-crash");
    const Event* crash = firstOf(store, TimelineKind::Crash);
    QVERIFY(crash);
    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    view.setRange(crash->time - secondsToTime(30), crash->time + secondsToTime(30));
    panel.refresh(store);
    const QPoint at = paintedAt(*panel.timeline(), store, *crash);
    QVERIFY(panel.timeline()->toolTipAt(at).contains(QStringLiteral("AssertionError")));
    QTest::mouseClick(panel.timeline(), Qt::LeftButton, {}, at);
    QVERIFY(panel.detailsText().contains(QStringLiteral("reason: ")));
    QVERIFY(panel.detailsText().contains(QStringLiteral("AssertionError")));
  }

  void kindFilterHidesEvictions() {
    const TelemetryStore& store = storeFor("evict-storm");
    const Event* eviction = firstOf(store, TimelineKind::Eviction);
    QVERIFY(eviction);
    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    view.setRange(eviction->time - secondsToTime(2), eviction->time + secondsToTime(2));
    panel.refresh(store);
    EventTimelineView* timeline = panel.timeline();
    const QPoint at = paintedAt(*timeline, store, *eviction);
    const auto before = timeline->hitTest(at);
    QVERIFY(before && timelineKindOf(*before) == TimelineKind::Eviction);

    auto* filter = panel.findChild<QAction*>(QStringLiteral("filter-eviction"));
    QVERIFY(filter);
    QVERIFY(filter->isChecked());
    filter->trigger();
    QVERIFY(!timeline->kindVisible(TimelineKind::Eviction));
    const auto after = timeline->hitTest(at);
    QVERIFY(!after || timelineKindOf(*after) != TimelineKind::Eviction);

    // Over the whole run nothing of the kind is painted, and the other kinds still are.
    view.setRange(0, store.now());
    panel.grab();
    QCOMPARE(timeline->lastFrame().shown_by_kind[static_cast<std::size_t>(TimelineKind::Eviction)], 0L);
    QVERIFY(timeline->lastFrame().shown_by_kind[static_cast<std::size_t>(TimelineKind::Reseed)] > 0);
    filter->trigger();
    panel.grab();
    QVERIFY(timeline->lastFrame().shown_by_kind[static_cast<std::size_t>(TimelineKind::Eviction)] > 0);
  }

  // The operator's notes are drawn where they are in the range, and only those.
  void notesInRangeAreDrawn() {
    const TelemetryStore& store = storeFor("evict-storm");
    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    panel.refresh(store);
    view.setNotes({{secondsToTime(100), "a"}, {secondsToTime(200), "b"}, {store.now() + secondsToTime(50), "later"}});
    view.setRange(0, store.now());
    panel.grab();
    QCOMPARE(panel.timeline()->lastFrame().notes, 2);
    view.setRange(secondsToTime(150), store.now());
    panel.grab();
    QCOMPARE(panel.timeline()->lastFrame().notes, 1);
  }

  void rendersInLightAndDarkPalettes_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<bool>("dark");
    for (const char* s : {"evict-storm", "cascade", "invariant-crash"})
      for (bool dark : {false, true})
        QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(QLatin1String(s), dark ? "dark" : "light"))) << s << dark;
  }
  void rendersInLightAndDarkPalettes() {
    QFETCH(QString, scenario);
    QFETCH(bool, dark);
    const TelemetryStore& store = storeFor(scenario);
    ViewState view;
    EventTimelinePanel panel(view);
    QPalette palette = panel.palette();
    if (dark) {
      palette.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
      palette.setColor(QPalette::AlternateBase, QColor(0x2a, 0x2a, 0x2a));
      palette.setColor(QPalette::Window, QColor(0x25, 0x25, 0x25));
      palette.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
      palette.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
      panel.setPalette(palette);
    }
    QVERIFY(showPanel(panel));
    view.setRange(0, store.now());
    panel.refresh(store);
    const QImage image = panel.grab().toImage();
    QCOMPARE(image.size(), QSize(1600, 300) * panel.devicePixelRatio());
    EventTimelineView* timeline = panel.timeline();
    QVERIFY(timeline->lastFrame().glyphs > 0);
    // Drawn on the palette's Base, with each kind in its own colour on top.
    const QImage canvas = timeline->grab().toImage();
    QCOMPARE(canvas.pixelColor(1, 1).rgb(), palette.color(QPalette::Base).rgb());
    std::map<QRgb, int> colours;
    for (int y = 0; y < canvas.height(); ++y)
      for (int x = 0; x < canvas.width(); ++x) ++colours[canvas.pixel(x, y) | 0xff000000u];
    const auto& frame = timeline->lastFrame();
    for (TimelineKind kind : {TimelineKind::Eviction, TimelineKind::Reseed})
      if (frame.shown_by_kind[static_cast<std::size_t>(kind)] > 0)
        QVERIFY2(colours.count(timelineKindColor(kind).rgb()), qPrintable(timelineKindLabel(kind)));
  }

  void twoHundredThousandEventsAreAggregated() {
    TelemetryStore store;
    RunStarted run;
    run.scenario = "synthetic storm";
    for (int d = 0; d < 4; ++d) run.workers.push_back({"D" + std::to_string(d), WorkerRole::Decode, 1'000'000});
    run.prefill = {{"P0", WorkerRole::Prefill, 0}, {"P1", WorkerRole::Prefill, 0}};
    std::uint64_t seq = 1;
    store.ingest(Event{seq++, 0, run});
    const long storm = 200'000;
    const SimTime crash_at = secondsToTime(31.0004);
    Event crash{};
    for (long i = 0; i < storm; ++i) {
      const SimTime t = i * 300;  // one eviction every 0.3 ms for a minute
      if (crash.seq == 0 && t > crash_at) {
        crash =
            Event{seq++, crash_at, WorkerCrashed{2, "AssertionError: seq_len - pre_len == req.extend_input_len", 7}};
        store.ingest(crash);
        store.ingest(Event{seq++, crash_at, KnobChanged{"K", 0, 200, "test", {}}});
      }
      store.ingest(Event{seq++, t,
                         Eviction{static_cast<WorkerId>(i % 4), static_cast<SessionId>(i + 1), (i % 97) * 1000,
                                  EvictionGranularity::Session, 1}});
    }
    QCOMPARE(store.discreteEvents().size(), std::size_t(200'000));

    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    view.setRange(0, secondsToTime(61));
    panel.refresh(store);
    panel.grab();
    QElapsedTimer clock;
    clock.start();
    for (int frame = 0; frame < 10; ++frame) {
      panel.refresh(store);  // as each frame does: the layout is rebuilt, then painted
      panel.timeline()->grab();
    }
    qInfo() << "a frame with 200K events in range took" << clock.elapsed() / 10.0 << "ms";

    EventTimelineView* timeline = panel.timeline();
    const auto& frame = timeline->lastFrame();
    QCOMPARE(frame.events_in_range, 200'000L);
    QCOMPARE(frame.events_shown, 200'000L);  // every one folded into some glyph, none dropped
    const int width = timeline->plotRect().width();
    const int rows = timeline->rowCount();
    QCOMPARE(rows, 4 + 2 + 8);
    QVERIFY2(frame.glyphs <= (width / EventTimelineView::kBinPx + 1) * rows, qPrintable(QString::number(frame.glyphs)));
    QVERIFY(timeline->glyphsPaintedLastFrame() <= width * rows);
    QCOMPARE(frame.lines, 1);
    // The one crash among the evictions still wins its cell.
    const auto hit = timeline->hitTest(paintedAt(*timeline, store, crash));
    QVERIFY(hit);
    QCOMPARE(hit->seq, crash.seq);
    QVERIFY(timeline->toolTipAt(paintedAt(*timeline, store, crash)).contains(QStringLiteral("events here")));
  }

  void wheelZoomsDragPansAndLiveFollowsAgain() {
    const TelemetryStore& store = storeFor("evict-storm");
    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    view.advanceLive(store.now());
    panel.refresh(store);
    QVERIFY(view.followLive());
    EventTimelineView* timeline = panel.timeline();
    const QRect plot = timeline->plotRect();
    const QPoint at(plot.left() + plot.width() / 4, plot.center().y());
    const SimTime span = view.to() - view.from();
    const SimTime under = timeline->timeForX(at.x());

    sendWheel(timeline, at, 1);
    QVERIFY(!view.followLive());
    QVERIFY(!panel.liveButton()->isChecked());
    QVERIFY(view.to() - view.from() < span);
    const SimTime pixel = (view.to() - view.from()) / plot.width() + 1;
    QVERIFY(std::abs(timeline->timeForX(at.x()) - under) <= pixel);  // the time under the cursor stays put

    const SimTime from = view.from(), zoomed = view.to() - view.from();
    QSignalSpy selected(&view, &ViewState::eventSelected);
    sendMouse(timeline, QEvent::MouseButtonPress, at, Qt::LeftButton);
    sendMouse(timeline, QEvent::MouseMove, at + QPoint(100, 0), Qt::LeftButton);
    sendMouse(timeline, QEvent::MouseButtonRelease, at + QPoint(100, 0), Qt::NoButton);
    QCOMPARE(view.to() - view.from(), zoomed);
    const SimTime expected = from - static_cast<SimTime>(100.0 * static_cast<double>(zoomed) / plot.width());
    QVERIFY(std::abs(view.from() - expected) <= pixel);
    QCOMPARE(selected.count(), 0);  // a drag is not a click

    panel.liveButton()->click();
    QVERIFY(view.followLive());
    QCOMPARE(view.to(), store.now());
  }

  void selectionFromAnotherPanelScrollsTheEventIntoView() {
    const TelemetryStore& store = storeFor("invariant-crash");
    const Event* crash = firstOf(store, TimelineKind::Crash);
    QVERIFY(crash);
    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    const SimTime span = secondsToTime(60);
    const SimTime away = crash->time > 3 * span ? 0 : crash->time + 2 * span;
    view.setRange(away, away + span);
    panel.refresh(store);

    view.selectEvent(crash->seq, crash->time);  // as replay's "next crash" does
    QVERIFY(view.from() <= crash->time && crash->time <= view.to());
    QCOMPARE(view.to() - view.from(), span);
    EventTimelineView* timeline = panel.timeline();
    QCOMPARE(timeline->highlightedSeq(), crash->seq);
    QCOMPARE(timeline->hitTest(paintedAt(*timeline, store, *crash))->seq, crash->seq);
    QVERIFY(panel.detailsText().contains(QStringLiteral("AssertionError")));

    // An event already in view is only highlighted: the range stays.
    const SimTime from = view.from();
    const Event* correction = firstOf(store, TimelineKind::Correction);
    QVERIFY(correction && correction->time >= from && correction->time <= view.to());
    view.selectEvent(correction->seq, correction->time);
    QCOMPARE(view.from(), from);
    QCOMPARE(timeline->highlightedSeq(), correction->seq);
  }

  void emptyStoreStillPaints() {
    TelemetryStore store;
    ViewState view;
    EventTimelinePanel panel(view);
    QVERIFY(showPanel(panel));
    panel.refresh(store);
    QVERIFY(!panel.grab().isNull());
    QCOMPARE(panel.timeline()->glyphsPaintedLastFrame(), 0);
    QVERIFY(!panel.timeline()->hitTest(QPoint(800, 100)));
  }
};

QTEST_MAIN(TestEventTimeline)
#include "test_event_timeline.moc"
