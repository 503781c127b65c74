// One owner of the time axis: charts and the event timeline ask ViewState to zoom, pan and follow,
// so the same wheel turn, swipe or double-click does the same to the range in either; the range
// actions (zoom in/out, go to time, reset) behave as the View menu says; and the cursor hovered in
// one time view is read out, with each series' value at that time, in every chart.
#include <QtTest>

#include <QWheelEvent>

#include "core/telemetry/MinMaxSeries.h"
#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/ViewState.h"
#include "widgets/timeline/EventTimelinePanel.h"
#include "widgets/timeline/EventTimelineView.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {

void sendWheel(QWidget* w, QPoint at, QPoint angle) {
  QWheelEvent e(at, w->mapToGlobal(at), QPoint(), angle, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(w, &e);
}

void sendMouse(QWidget* w, QEvent::Type type, QPoint at, Qt::MouseButtons buttons) {
  const Qt::MouseButton button = type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton;
  QMouseEvent e(type, at, w->mapToGlobal(at), button, buttons, Qt::NoModifier);
  QApplication::sendEvent(w, &e);
}

// Equal to the microsecond, as float arithmetic on a span allows.
bool near(SimTime a, SimTime b) { return std::abs(a - b) <= 2; }

const TelemetryStore& store() {
  static TelemetryStore s = [] {
    EventLog log;
    SimulationOptions options;
    options.duration_s = 400;
    simulate("e2-cold-d", {}, options, &log);
    TelemetryStore t;
    t.ingest(log.events);
    return t;
  }();
  return s;
}

// A chart and a timeline, each on its own ViewState starting at the same range, so one gesture can
// be sent to each and the ranges compared.
struct TwoViews {
  ViewState chart_view, timeline_view;
  TimeSeriesChart chart{chart_view, "KV"};
  EventTimelinePanel panel{timeline_view};
  EventTimelineView* timeline = panel.timeline();

  TwoViews() {
    for (ViewState* v : {&chart_view, &timeline_view}) v->setRange(secondsToTime(100), secondsToTime(400));
    chart.resize(900, 300);
    panel.resize(1300, 300);
    chart.show();
    panel.show();
    panel.refresh(store());
  }
  bool exposed() { return QTest::qWaitForWindowExposed(&chart) && QTest::qWaitForWindowExposed(&panel); }
  // The x of `t` in each view.
  int chartX(SimTime t) const { return chart.plotRect().left() + chart.grid().columnOf(t); }
  int timelineX(SimTime t) const { return timeline->xForTime(t); }
  SimTime chartPixel() const { return (chart_view.to() - chart_view.from()) / chart.plotRect().width() + 1; }
  SimTime timelinePixel() const {
    return (timeline_view.to() - timeline_view.from()) / timeline->plotRect().width() + 1;
  }
};

}  // namespace

class TimeAxisTest : public QObject {
  Q_OBJECT

 private slots:
  // One notch, half a notch (a trackpad) and one notch out: the same span in both views, and the
  // time under the pointer stays under it in each.
  void wheelZoomsTheSameInChartsAndTimeline_data() {
    QTest::addColumn<int>("angle");
    QTest::newRow("one notch in") << 120;
    QTest::newRow("half a notch in (trackpad)") << 60;
    QTest::newRow("one notch out") << -120;
  }
  void wheelZoomsTheSameInChartsAndTimeline() {
    QFETCH(int, angle);
    TwoViews v;
    QVERIFY(v.exposed());
    const SimTime anchor = secondsToTime(175);
    sendWheel(&v.chart, {v.chartX(anchor), v.chart.plotRect().center().y()}, {0, angle});
    sendWheel(v.timeline, {v.timelineX(anchor), v.timeline->plotRect().center().y()}, {0, angle});
    const SimTime expected_span = static_cast<SimTime>(static_cast<double>(secondsToTime(300)) *
                                                       std::pow(ViewState::kZoomPerNotch, angle / 120.0));
    QVERIFY(!v.chart_view.followLive() && !v.timeline_view.followLive());
    QVERIFY(std::abs((v.chart_view.to() - v.chart_view.from()) - expected_span) <= 1);
    QVERIFY(std::abs((v.timeline_view.to() - v.timeline_view.from()) - expected_span) <= 1);
    // The anchor keeps its place: its fraction of the range is what it was (1/4), to a pixel.
    QVERIFY(std::abs(v.chartX(anchor) - (v.chart.plotRect().left() + v.chart.plotRect().width() / 4)) <= 2);
    QVERIFY(std::abs(v.timelineX(anchor) - (v.timeline->plotRect().left() + v.timeline->plotRect().width() / 4)) <= 2);
  }

  // A sideways swipe pans a tenth of the span per notch in both; a drag pans by the pixels moved.
  void swipeAndDragPanTheSame() {
    TwoViews v;
    QVERIFY(v.exposed());
    sendWheel(&v.chart, v.chart.plotRect().center(), {-120, 0});
    sendWheel(v.timeline, v.timeline->plotRect().center(), {-120, 0});
    QCOMPARE(v.chart_view.from(), secondsToTime(130));
    QCOMPARE(v.timeline_view.from(), secondsToTime(130));
    QCOMPARE(v.chart_view.to() - v.chart_view.from(), secondsToTime(300));

    for (ViewState* s : {&v.chart_view, &v.timeline_view}) s->setRange(secondsToTime(100), secondsToTime(400));
    const QPoint c = v.chart.plotRect().center(), t = v.timeline->plotRect().center();
    sendMouse(&v.chart, QEvent::MouseButtonPress, c, Qt::LeftButton);
    sendMouse(&v.chart, QEvent::MouseMove, c + QPoint(90, 0), Qt::LeftButton);
    sendMouse(&v.chart, QEvent::MouseButtonRelease, c + QPoint(90, 0), Qt::NoButton);
    sendMouse(v.timeline, QEvent::MouseButtonPress, t, Qt::LeftButton);
    sendMouse(v.timeline, QEvent::MouseMove, t + QPoint(90, 0), Qt::LeftButton);
    sendMouse(v.timeline, QEvent::MouseButtonRelease, t + QPoint(90, 0), Qt::NoButton);
    // Dragged right: earlier times come into view, by 90 px of each plot's width.
    const auto shifted = [](int width) { return secondsToTime(100) - secondsToTime(300) * 90 / width; };
    QVERIFY(std::abs(v.chart_view.from() - shifted(v.chart.plotRect().width())) <= v.chartPixel());
    QVERIFY(std::abs(v.timeline_view.from() - shifted(v.timeline->plotRect().width())) <= v.timelinePixel());
    QCOMPARE(v.chart_view.to() - v.chart_view.from(), secondsToTime(300));
    QCOMPARE(v.timeline_view.to() - v.timeline_view.from(), secondsToTime(300));
  }

  // A double-click anywhere on a time view's plot returns to following the live edge.
  void doubleClickFollowsLiveInBoth() {
    TwoViews v;
    QVERIFY(v.exposed());
    QTest::mouseDClick(&v.chart, Qt::LeftButton, Qt::NoModifier, v.chart.plotRect().center());
    QTest::mouseDClick(v.timeline, Qt::LeftButton, Qt::NoModifier, v.timeline->plotRect().center());
    QVERIFY(v.chart_view.followLive());
    QVERIFY(v.timeline_view.followLive());
  }

  // The View menu's actions on the range.
  void rangeActions() {
    ViewState view;
    view.setRange(secondsToTime(100), secondsToTime(200));
    view.zoomIn();
    QVERIFY(near(view.to() - view.from(), secondsToTime(80)));
    QVERIFY(near(view.from() + (view.to() - view.from()) / 2, secondsToTime(150)));  // about the centre
    view.zoomOut();
    QVERIFY(near(view.to() - view.from(), secondsToTime(100)));
    view.goToTime(secondsToTime(30));  // centred, but never before the run's start
    QCOMPARE(view.from(), 0);
    QVERIFY(near(view.to(), secondsToTime(100)));
    view.goToTime(secondsToTime(500));
    QVERIFY(near(view.from(), secondsToTime(450)));
    for (int i = 0; i < 200; ++i) view.zoomIn();
    QCOMPARE(view.to() - view.from(), ViewState::kMinSpan);
    QVERIFY(!view.followLive());
    view.resetZoom();
    QVERIFY(view.followLive());
    view.advanceLive(secondsToTime(1000));
    QCOMPARE(view.to() - view.from(), view.liveWindow());
  }

  // Hovering one view moves the cursor everywhere: the other chart reads out its series' values at
  // that time, and leaving clears it.
  void cursorIsSharedAndReadsOutValues() {
    ViewState view;
    view.setRange(secondsToTime(0), secondsToTime(100));
    MinMaxSeries kv, load;
    for (int s = 0; s <= 100; ++s) {
      kv.add(secondsToTime(s), s < 50 ? 10.0 : 20.0);
      load.add(secondsToTime(s), 3.0);
    }
    TimeSeriesChart a(view, "KV"), b(view, "Load");
    a.addSeries("D1", Qt::red);
    b.addSeries("D1 running", Qt::blue);
    a.setUnit("%");  // each value with its unit, as Grafana reads them out
    b.setUnit("requests");
    for (TimeSeriesChart* c : {&a, &b}) {
      c->resize(600, 240);
      c->show();
      QVERIFY(QTest::qWaitForWindowExposed(c));
    }
    a.setSeriesData(0, kv);
    b.setSeriesData(0, load);
    EventTimelinePanel panel(view);
    panel.resize(800, 250);
    panel.show();
    panel.refresh(store());
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(a.cursorReadout().isEmpty());

    // The pointer on the timeline at 75 s: both charts read out their value there.
    EventTimelineView* timeline = panel.timeline();
    sendMouse(timeline, QEvent::MouseMove, {timeline->xForTime(secondsToTime(75)), timeline->plotRect().center().y()},
              Qt::NoButton);
    QVERIFY(view.cursorTime().has_value());
    QVERIFY(std::abs(*view.cursorTime() - secondsToTime(75)) <= secondsToTime(1));
    QCOMPARE(a.cursorReadout(), QStringList{"D1: 20 %"});
    QCOMPARE(b.cursorReadout(), QStringList{"D1 running: 3 requests"});

    // On chart a at 25 s: the readout follows, in a and in b.
    sendMouse(&a, QEvent::MouseMove,
              {a.plotRect().left() + a.grid().columnOf(secondsToTime(25)), a.plotRect().center().y()}, Qt::NoButton);
    QVERIFY(std::abs(*view.cursorTime() - secondsToTime(25)) <= secondsToTime(1));
    QCOMPARE(a.cursorReadout(), QStringList{"D1: 10 %"});
    QCOMPARE(b.cursorReadout(), QStringList{"D1 running: 3 requests"});

    // The readout is painted: the chart's image differs with and without the cursor.
    const QImage with = a.grab().toImage();
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(&a, &leave);
    QVERIFY(!view.cursorTime().has_value());
    QVERIFY(a.cursorReadout().isEmpty());
    QVERIFY(a.grab().toImage() != with);
  }

  // Shift+drag over a chart zooms to the span dragged; Ctrl+Z (undoRange) steps back through the
  // gestures, a wheel spin being one step, to following live; then there is nothing to undo.
  void boxZoomAndUndo() {
    ViewState view;
    view.setRange(0, secondsToTime(100));  // from following live
    QTest::qWait(700);                     // a gesture of its own
    TimeSeriesChart chart(view, "KV");
    chart.resize(600, 240);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    const QRect plot = chart.plotRect();
    const int x0 = plot.left() + plot.width() / 4, x1 = plot.left() + plot.width() / 2, y = plot.center().y();
    QTest::mousePress(&chart, Qt::LeftButton, Qt::ShiftModifier, {x0, y});
    QMouseEvent move(QEvent::MouseMove, QPointF(x1, y), chart.mapToGlobal(QPointF(x1, y)), Qt::NoButton, Qt::LeftButton,
                     Qt::ShiftModifier);
    QApplication::sendEvent(&chart, &move);
    QTest::mouseRelease(&chart, Qt::LeftButton, Qt::ShiftModifier, {x1, y});
    const SimTime column = secondsToTime(100) / plot.width() + 1;
    QVERIFY2(std::abs(view.from() - secondsToTime(25)) <= column && std::abs(view.to() - secondsToTime(50)) <= column,
             qPrintable(QStringLiteral("%1..%2").arg(view.from()).arg(view.to())));
    QTest::qWait(700);
    for (int notch = 0; notch < 3; ++notch) sendWheel(&chart, plot.center(), {0, 120});  // one spin
    QVERIFY(view.to() - view.from() < secondsToTime(25));
    QVERIFY(view.undoRange());  // the spin
    QVERIFY(std::abs(view.from() - secondsToTime(25)) <= column);
    QVERIFY(view.undoRange());  // the box
    QCOMPARE(view.from(), SimTime{0});
    QCOMPARE(view.to(), secondsToTime(100));
    QVERIFY(view.undoRange());  // the first zoom: following again
    QVERIFY(view.followLive());
    QVERIFY(!view.undoRange());
  }
};

QTEST_MAIN(TimeAxisTest)
#include "test_time_axis.moc"
