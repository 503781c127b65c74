// Charts that never lie: every pixel column a chart paints spans exactly the min and max of what
// the series held in that column's time, checked against a brute-force pass over the raw samples
// and against the pixels of the rendered image, at several sizes and ranges (a live tail, a
// finding's window, the whole run, zoomed out past it), for real simulations; gaps stay gaps, a
// crash is a step, and older data rolled up never hides its spike.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/telemetry/TelemetryStore.h"
#include "tests/support/ChartTruth.h"
#include "tests/support/SimHarness.h"
#include "widgets/charts/AxisTicks.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/ViewState.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {
const QColor kInk(255, 0, 255);  // a colour nothing else in the chart uses

}  // namespace

class ChartTruthTest : public QObject {
  Q_OBJECT
  EventLog log_;
  TelemetryStore store_;

 private slots:
  void initTestCase() {
    SimulationOptions options;
    options.duration_s = 1466;  // the window an operator zoomed out to
    simulate("e2-cold-d", {}, options, &log_);
    store_.ingest(log_.events);
  }

  void gaugeColumnsMatchTheRawSamples_data() {
    QTest::addColumn<QSize>("size");
    QTest::addColumn<double>("from_s");
    QTest::addColumn<double>("to_s");
    for (const QSize size : {QSize(420, 200), QSize(900, 320), QSize(1700, 420)}) {
      const QString s = QStringLiteral("%1x%2").arg(size.width()).arg(size.height());
      QTest::newRow(qPrintable(s + " live tail")) << size << 1166.0 << 1466.0;
      QTest::newRow(qPrintable(s + " a finding's window")) << size << 355.0 << 450.0;
      QTest::newRow(qPrintable(s + " whole run")) << size << 0.0 << 1466.0;
      QTest::newRow(qPrintable(s + " zoomed out past the end")) << size << 0.0 << 4000.0;
      QTest::newRow(qPrintable(s + " ten seconds")) << size << 700.0 << 710.0;
    }
  }

  void gaugeColumnsMatchTheRawSamples() {
    QFETCH(QSize, size);
    QFETCH(double, from_s);
    QFETCH(double, to_s);
    ViewState view;
    view.setRange(secondsToTime(from_s), secondsToTime(to_s));
    TimeSeriesChart chart(view, "KV");
    chart.setFixedYRange(0, 100);
    chart.addSeries("D", kInk);
    chart.resize(size);
    chart.setHoldUntil(store_.now());
    for (std::size_t i = 0; i < store_.workers().size(); ++i) {
      const WorkerSeries& w = store_.workers()[i];
      if (w.info.role != WorkerRole::Decode) continue;
      chart.setSeriesData(0, w.gauge(WorkerGauge::KvFraction), 100.0);
      checkChart(chart, kvSamples(log_.events, static_cast<WorkerId>(i)), true, store_.now(), 100.0, kInk,
                 QString::fromStdString(w.info.name));
      // Resident sessions change in whole steps on whole seconds: risers on column edges.
      std::vector<Sample> sessions;
      for (const auto& [t, snap] : log_.all<Snapshot>())
        for (const WorkerGauges& g : snap.workers)
          if (g.worker == static_cast<WorkerId>(i))
            sessions.push_back({t, static_cast<float>(g.resident_sessions), static_cast<float>(g.resident_sessions)});
      chart.setFixedYRange(0, 20);
      chart.setSeriesData(0, w.gauge(WorkerGauge::ResidentSessions));
      checkChart(chart, sessions, true, store_.now(), 1.0, kInk, QString::fromStdString(w.info.name) + " sessions");
      chart.setFixedYRange(0, 100);
    }
  }

  // Round ticks (1, 2 or 5 x 10^k), never the same label twice, for any range and density; the
  // sessions axis of the real chart too.
  void axisTicksAreRoundAndNeverRepeat() {
    for (const double top : {0.3, 1.0, 2.5, 5.0, 7.0, 100.0, 1234.0, 1e6})
      for (int target = 2; target <= 12; ++target) {
        const AxisTicks t = AxisTicks::make(0, top, target);
        QVERIFY(!t.ticks.empty());
        const double mantissa = t.step / std::pow(10, std::floor(std::log10(t.step)));
        QVERIFY2(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 || std::abs(mantissa - 5) < 1e-9,
                 qPrintable(QString::number(t.step)));
        QStringList labels;
        for (const auto& tick : t.ticks) labels << tick.label;
        QCOMPARE(labels.removeDuplicates(), 0);
      }
    ViewState view;
    view.setRange(0, secondsToTime(600));
    TimeSeriesChart chart(view, "sessions");
    chart.setIntegerValues(true);
    chart.addSeries("D0", kInk);
    chart.resize(600, 400);
    MinMaxSeries few;
    for (int i = 0; i < 600; ++i) few.add(secondsToTime(i), i % 3);
    chart.setSeriesData(0, few);
    QStringList labels = chart.tickLabelsY().split('|');
    QCOMPARE(labels.removeDuplicates(), 0);
    for (const QString& l : labels) QVERIFY2(!l.contains('.'), qPrintable(l));
  }

  // The y labels set the plot's left edge: data large enough to widen them narrows the plot, and the
  // chart says its columns (computed for the old width) are stale, so the panel sets them again.
  void widerYLabelsMakeTheColumnsStale() {
    ViewState view;
    view.setRange(0, secondsToTime(600));
    TimeSeriesChart chart(view, "sessions");
    chart.addSeries("D0", kInk);
    chart.resize(600, 400);
    QSignalSpy stale(&chart, &TimeSeriesChart::columnsStale);
    MinMaxSeries small, large;
    for (int i = 0; i < 600; ++i) {
      small.add(secondsToTime(i), i % 3);
      large.add(secondsToTime(i), 100000.0 * (i % 3));
    }
    chart.setSeriesData(0, small);
    const int narrow_labels = chart.grid().columns;
    QCOMPARE(static_cast<int>(chart.drawnColumns(0).size()), narrow_labels);
    QCOMPARE(stale.count(), 0);
    chart.setSeriesData(0, large);  // computed at the old width, then the labels widen
    QVERIFY(chart.grid().columns < narrow_labels);
    QCOMPARE(stale.count(), 1);
    chart.setSeriesData(0, large);  // set again: the columns fit, nothing stale
    QCOMPARE(static_cast<int>(chart.drawnColumns(0).size()), chart.grid().columns);
    QCOMPARE(stale.count(), 1);
  }

  // Knob changes applied together (same instant, or a few pixels apart) make one marker listing
  // them, not labels drawn over each other.
  void knobChangesAtOnceMakeOneMarker() {
    ViewState view;
    view.setRange(0, secondsToTime(600));
    TimeSeriesChart chart(view, "KV");
    chart.resize(800, 300);
    chart.setMarkers({{secondsToTime(100), "K=200"},
                      {secondsToTime(100), "rho=0.9"},
                      {secondsToTime(101), "policy linear"},
                      {secondsToTime(400), "K=0"}});
    const auto drawn = chart.drawnMarkers();
    QCOMPARE(drawn.size(), std::size_t{2});
    QCOMPARE(drawn[0].label, QStringLiteral("K=200, rho=0.9, policy linear"));
    QCOMPARE(drawn[1].label, QStringLiteral("K=0"));
  }

  // A change exactly on a column edge: the column it starts holds both values, so the riser is drawn.
  void aStepOnAColumnEdgeKeepsItsRiser() {
    MinMaxSeries series;
    for (int i = 0; i <= 100; ++i) series.add(secondsToTime(i), i < 50 ? 12.0 : 10.0);
    const ColumnGrid g{0, secondsToTime(100), 100};  // column 50 starts at exactly 50 s
    QCOMPARE(g.columnStart(50), secondsToTime(50));
    EnvelopeOptions options;
    options.hold_until = secondsToTime(100);
    const auto columns = series.envelope(g, options);
    QCOMPARE(columns[50].lo, 10.0);
    QCOMPARE(columns[50].hi, 12.0);
    QCOMPARE(columns[49].lo, 12.0);
    QCOMPARE(columns[51].hi, 10.0);
  }

  void latencyPointsAreNotHeld() {
    ViewState view;
    view.setRange(0, secondsToTime(1466));
    TimeSeriesChart chart(view, "latency");
    chart.addSeries("E2E", kInk, TimeSeriesChart::Style::Points);
    chart.resize(800, 300);
    chart.setSeriesData(0, store_.e2eSeries());
    std::vector<Sample> samples;
    for (const auto& [t, d] : log_.all<RequestDone>())
      if (d.status == RequestStatus::Ok)
        samples.push_back({t, static_cast<float>(timeToSeconds(d.e2e)), static_cast<float>(timeToSeconds(d.e2e))});
    checkChart(chart, samples, false, 0, 1.0, kInk, "E2E");
  }

  // A worker that stops reporting is a gap, and a crash from 90% to 0 is a step, not a slide.
  void gapsStayGapsAndCrashesAreSteps() {
    MinMaxSeries series;
    std::vector<Sample> samples;
    auto add = [&](double t_s, float v) {
      series.add(secondsToTime(t_s), v);
      samples.push_back({secondsToTime(t_s), v, v});
    };
    for (int i = 0; i <= 100; ++i) add(i, 0.9f);
    add(100.5, 0.0f);  // the crash, within a second
    for (int i = 101; i <= 150; ++i) add(i, 0.0f);
    for (int i = 250; i <= 300; ++i) add(i, 0.5f);  // 100 s without a sample: unreachable
    ViewState view;
    view.setRange(0, secondsToTime(300));
    TimeSeriesChart chart(view, "gaps");
    chart.setFixedYRange(0, 1);
    chart.addSeries("D", kInk);
    chart.resize(640, 240);
    chart.setHoldUntil(secondsToTime(300));
    chart.setSeriesData(0, series);
    checkChart(chart, samples, true, secondsToTime(300), 1.0, kInk, "gaps");
    const ColumnGrid g = chart.grid();
    const auto& cols = chart.drawnColumns(0);
    QVERIFY(!cols[static_cast<std::size_t>(g.columnOf(secondsToTime(200)))].present);
    const EnvelopeColumn after = cols[static_cast<std::size_t>(g.columnOf(secondsToTime(100.5)) + 2)];
    QVERIFY(after.present && after.hi == 0.0);  // two columns after the crash it is already 0
  }

  // Past the raw ring the rollups serve older columns: marked inexact, never hiding a spike, and
  // no hole between them and the raw samples (the "nothing after 380 s" bug).
  void rolledUpHistoryKeepsItsSpikesAndHasNoHoles() {
    MinMaxSeries series(64, 4, 8, 512);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> noise(0.2f, 0.6f);
    std::vector<Sample> samples;
    for (int i = 0; i < 6000; ++i) {
      const float v = i % 997 == 500 ? 1.0f : noise(rng);
      series.add(secondsToTime(i), v);
      samples.push_back({secondsToTime(i), v, v});
    }
    const ColumnGrid g{0, secondsToTime(5999), 300};
    EnvelopeOptions options;
    options.hold_until = secondsToTime(5999);
    const auto got = series.envelope(g, options);
    const auto truth = bruteForce(samples, g, true, medianGap(samples), options.hold_until, 1.0);
    for (int c = 0; c < g.columns; ++c) {
      const auto& d = got[static_cast<std::size_t>(c)];
      const auto& e = truth[static_cast<std::size_t>(c)];
      QVERIFY2(d.present, qPrintable(QStringLiteral("column %1 empty").arg(c)));
      if (g.columnStart(c) >= series.exactSince()) {
        QVERIFY(d.exact);
        QCOMPARE(d.lo, e.lo);
        QCOMPARE(d.hi, e.hi);
      } else {
        QVERIFY2(d.lo <= e.lo && d.hi >= e.hi, qPrintable(QStringLiteral("column %1 hides a sample").arg(c)));
      }
    }
  }
};

QTEST_MAIN(ChartTruthTest)
#include "test_chart_truth.moc"
