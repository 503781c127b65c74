// The console with many workers (16 P + 64 D): the worker strip lists the worst and counts the rest
// by state, the KV charts draw a few lines and a min/median/max band of the others (checked column
// by column against the values put into the store), the link grid aggregates by P and by D with a
// drill-down, and the timeline folds rows into groups whose row is the union of its members'.
#include <QAbstractItemModelTester>
#include <QTableView>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "core/run/WhatIfPreview.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/LinkAggregateModel.h"
#include "widgets/charts/LinkHealthModel.h"
#include "widgets/charts/LinkHealthPanel.h"
#include "widgets/charts/WorkerBand.h"
#include "widgets/charts/WorkerChartPanel.h"
#include "widgets/common/ViewState.h"
#include "widgets/timeline/EventTimelineView.h"
#include "widgets/timeline/TimelineRowGroups.h"

using namespace kvscope;

namespace {
constexpr int kDecode = 64;
constexpr int kPrefill = 16;
constexpr std::int64_t kCapacity = 1'000'000;
constexpr int kSeconds = 600;
constexpr int kSpikeWorker = 20;  // a band worker with one 1-s spike to 99 %
constexpr int kSpikeSecond = 300;

// Worker w's steady KV fraction: distinct values in [0.05, 0.68], D61..D63 the fullest.
double baseFraction(int w) { return 0.05 + 0.01 * ((w * 37) % 64); }

std::uint64_t seq = 1;
Event ev(SimTime t, EventPayload p) { return Event{seq++, t, std::move(p)}; }

RunStarted runStarted() {
  RunStarted r;
  r.scenario = "many";
  r.policy = "kv-aware";
  for (int w = 0; w < kDecode; ++w) r.workers.push_back({"D" + std::to_string(w), WorkerRole::Decode, kCapacity});
  for (int p = 0; p < kPrefill; ++p) r.prefill.push_back({"P" + std::to_string(p), WorkerRole::Prefill, kCapacity});
  return r;
}

// A snapshot a second; every link alive, except those `links` says.
void fill(TelemetryStore& store) {
  std::vector<Event> batch{ev(0, runStarted())};
  for (int s = 1; s <= kSeconds; ++s) {
    Snapshot snap;
    for (int w = 0; w < kDecode; ++w) {
      WorkerGauges g;
      g.worker = w;
      g.kv_capacity = kCapacity;
      const double f = w == kSpikeWorker && s == kSpikeSecond ? 0.99 : baseFraction(w);
      g.kv_used = static_cast<std::int64_t>(std::llround(f * kCapacity));
      g.kv_peak = g.kv_used;
      g.resident_sessions = w % 7;
      g.queued = (w * 11) % 13;  // 12, the most, at D7, D20, D33, D46 and D59
      snap.workers.push_back(g);
    }
    for (int p = 0; p < kPrefill; ++p)
      for (int w = 0; w < kDecode; ++w) snap.links.push_back({p, w, 0, 0, LinkState::Alive});
    batch.push_back(ev(secondsToTime(s), std::move(snap)));
  }
  store.ingest(batch);
}

int valueRound(double v) { return static_cast<int>(std::lround(v * 1000)); }
}  // namespace

class ManyWorkersTest : public QObject {
  Q_OBJECT
 private slots:
  void stripListsTheWorstAndCountsTheRest();
  void clickSelectsAWorkerForTheCharts();
  void theStripHoldsItsOrderUnderThePointer();
  void chartsDrawTheStripsWorstWorkers();
  void bandIsMinMedianMaxOfTheOthersPerColumn();
  void bandFunctionAgainstRawColumns();
  void selectedWorkersAreTheLines();
  void fewWorkersKeepOneLineEach();
  void anyGaugeByItsKeyIsAChartPerWorker();
  void linksAggregateByPrefillAndDecodeWithDrillDown();
  void timelineGroupsRowsIntoTheirUnion();
};

void ManyWorkersTest::stripListsTheWorstAndCountsTheRest() {
  TelemetryStore store;
  fill(store);
  // D40 and D7 crash; D3, D50, D12 evict: those five are worse than the 59 others.
  store.ingest(std::vector<Event>{ev(secondsToTime(kSeconds) + 1, WorkerCrashed{40, "oom", 3}),
                                  ev(secondsToTime(kSeconds) + 2, WorkerCrashed{7, "oom", 1}),
                                  ev(secondsToTime(kSeconds) + 3, Eviction{3, 1, 5000}),
                                  ev(secondsToTime(kSeconds) + 4, Eviction{50, 2, 5000}),
                                  ev(secondsToTime(kSeconds) + 5, Eviction{12, 3, 5000})});
  ViewState view;
  DecodeLoadPanel panel(view);
  QAbstractItemModelTester tester(&panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  panel.refresh(store);
  DecodeLoadModel& model = panel.model();
  QCOMPARE(model.rowCount(), 8);
  QCOMPARE(model.hiddenCount(), kDecode - 8);
  auto name = [&](int row) { return model.workerAt(row); };
  auto state = [&](int row) { return model.data(model.index(row, DecodeLoadModel::State), Qt::UserRole).toString(); };
  // Worst first, ties in worker order: the panel ticks and greys "Worst first" (64 > kWorstFirstAbove)
  // and the model sorts so even when nobody asked.
  QVERIFY(model.worstFirst());
  DecodeLoadModel bare;
  bare.setMaxRows(8);
  bare.refresh(store);
  QVERIFY(!bare.worstFirst());
  QCOMPARE(bare.workerAt(0), QString("D7"));
  QCOMPARE(bare.workerAt(4), QString("D50"));
  QCOMPARE(name(0), QString("D7"));
  QCOMPARE(name(1), QString("D40"));
  QCOMPARE(state(0), QString("crashed"));
  QCOMPARE(name(2), QString("D3"));
  QCOMPARE(name(3), QString("D12"));
  QCOMPARE(name(4), QString("D50"));
  QCOMPARE(state(4), QString("evicting"));
  // The rest share one state: the three listed after the evicting ones and all 56 hidden.
  const QString rest = state(5);
  QVERIFY(rest != "evicting" && rest != "crashed");
  for (int row = 5; row < 8; ++row) QCOMPARE(state(row), rest);
  QCOMPARE(model.hiddenByState().size(), std::size_t(1));
  QCOMPARE(model.hiddenByState()[0].second, 56);
  QCOMPARE(model.hiddenSummary(), QStringLiteral("56 %1").arg(rest));
  // Listed in worker order among equals: D0, D1, D2 (D3 is listed above, D4 is the first not listed).
  QCOMPARE(name(5), QString("D0"));
  QCOMPARE(name(7), QString("D2"));
  QCOMPARE(model.rowOfWorker("D4"), -1);
}

void ManyWorkersTest::clickSelectsAWorkerForTheCharts() {
  TelemetryStore store;
  fill(store);
  ViewState view;
  DecodeLoadPanel panel(view);
  panel.resize(900, 500);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.refresh(store);
  QTableView& table = panel.table();
  const QString second = panel.model().workerAt(1);
  QTest::mouseClick(table.viewport(), Qt::LeftButton, Qt::NoModifier,
                    table.visualRect(panel.model().index(1, 0)).center());
  QCOMPARE(view.selectedWorkers(), QStringList{second});
  QVERIFY(panel.model().data(panel.model().index(1, DecodeLoadModel::Worker), Qt::BackgroundRole).isValid());
  const QString third = panel.model().workerAt(2);
  QTest::mouseClick(table.viewport(), Qt::LeftButton, Qt::ControlModifier,
                    table.visualRect(panel.model().index(2, 0)).center());
  QCOMPARE(view.selectedWorkers(), (QStringList{second, third}));
  QTest::mouseClick(table.viewport(), Qt::LeftButton, Qt::NoModifier,
                    table.visualRect(panel.model().index(1, 0)).center());
  QCOMPARE(view.selectedWorkers(), QStringList{third});
}

// While the pointer is over the strip its rows stay put (at 64 D they re-sorted under a click):
// D33 crashes after the pointer entered, and the rows listed keep their places; D33 comes in only
// where a listed worker left (none did), and takes the top row once the pointer leaves.
void ManyWorkersTest::theStripHoldsItsOrderUnderThePointer() {
  TelemetryStore store;
  fill(store);
  store.ingest(std::vector<Event>{ev(secondsToTime(kSeconds) + 1, Eviction{12, 1, 5000})});
  ViewState view;
  DecodeLoadPanel panel(view);
  panel.resize(900, 500);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.refresh(store);
  DecodeLoadModel& model = panel.model();
  QStringList before;
  for (int row = 0; row < model.rowCount(); ++row) before << model.workerAt(row);
  QCOMPARE(before.front(), QString("D12"));
  QEvent enter(QEvent::Enter);
  QApplication::sendEvent(panel.table().viewport(), &enter);
  QVERIFY(model.frozen());
  store.ingest(std::vector<Event>{ev(secondsToTime(kSeconds) + 2, WorkerCrashed{33, "oom", 1})});
  panel.refresh(store);
  QStringList held;
  for (int row = 0; row < model.rowCount(); ++row) held << model.workerAt(row);
  QCOMPARE(held, before);
  QEvent leave(QEvent::Leave);
  QApplication::sendEvent(panel.table().viewport(), &leave);
  QVERIFY(!model.frozen());
  panel.refresh(store);
  QCOMPARE(model.workerAt(0), QString("D33"));
  QCOMPARE(model.workerAt(1), QString("D12"));
}

// With nobody picked, the charts' lines are the strip's worst (crashed, evicting...), then the
// fullest: the top rows of the strip and the lines of the charts name the same workers.
void ManyWorkersTest::chartsDrawTheStripsWorstWorkers() {
  TelemetryStore store;
  fill(store);
  store.ingest(std::vector<Event>{ev(secondsToTime(kSeconds) + 1, WorkerCrashed{5, "oom", 1}),
                                  ev(secondsToTime(kSeconds) + 2, Eviction{9, 1, 5000})});
  ViewState view;
  DecodeLoadPanel strip(view);
  KvPoolPanel kv(view);
  kv.resize(800, 600);
  strip.refresh(store);
  QCOMPARE(view.worstWorkers(), (QStringList{"D5", "D9"}));
  kv.refresh(store);
  // D5 and D9 from the strip, then the fullest pool now of the rest (the largest base fraction).
  int fullest = 0;
  for (int w = 0; w < kDecode; ++w)
    if (w != 5 && w != 9 && baseFraction(w) > baseFraction(fullest)) fullest = w;
  std::vector<int> expected{5, 9, fullest};
  std::sort(expected.begin(), expected.end());
  QCOMPARE(kv.lineWorkers(), expected);
}

void ManyWorkersTest::bandIsMinMedianMaxOfTheOthersPerColumn() {
  TelemetryStore store;
  fill(store);
  ViewState view;
  view.setRange(secondsToTime(10), secondsToTime(kSeconds - 10));
  KvPoolPanel panel(view);
  panel.resize(800, 600);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.refresh(store);
  // Lines: the three fullest now (D61..D63 hold the three largest base fractions? check by value).
  std::vector<int> order(kDecode);
  for (int w = 0; w < kDecode; ++w) order[static_cast<std::size_t>(w)] = w;
  std::stable_sort(order.begin(), order.end(), [](int a, int b) { return baseFraction(a) > baseFraction(b); });
  std::vector<int> fullest(order.begin(), order.begin() + 3);
  std::sort(fullest.begin(), fullest.end());
  QCOMPARE(panel.lineWorkers(), fullest);
  QCOMPARE(static_cast<int>(panel.bandWorkers().size()), kDecode - 3);
  TimeSeriesChart& chart = panel.occupancyChart();
  QCOMPARE(chart.bandLegend(), QString("band: 61 other D (min/median/max)"));
  QCOMPARE(chart.seriesName(0), QString("D%1").arg(fullest[0]));

  // Expected from the values put in: the band workers' steady fractions (in %), and the spike.
  std::vector<double> values;
  for (int w : panel.bandWorkers()) values.push_back(baseFraction(w) * 100);
  std::sort(values.begin(), values.end());
  const double lo = values.front(), hi = values.back();
  const double median = values[(values.size() - 1) / 2];
  const auto& band = chart.drawnBand();
  QCOMPARE(static_cast<int>(band.size()), chart.plotColumns());
  const ColumnGrid grid = chart.grid();
  const int spike_column = grid.columnOf(secondsToTime(kSpikeSecond));
  int spiked = 0;
  for (int c = 0; c < static_cast<int>(band.size()); ++c) {
    const BandColumn& b = band[static_cast<std::size_t>(c)];
    QVERIFY2(b.present, qPrintable(QString("column %1").arg(c)));
    QCOMPARE(b.workers, kDecode - 3);
    QCOMPARE(valueRound(b.lo), valueRound(lo));
    if (std::abs(c - spike_column) > 2) {
      QCOMPARE(valueRound(b.hi), valueRound(hi));
      QCOMPARE(valueRound(b.median), valueRound(median));
    } else if (valueRound(b.hi) == valueRound(99.0)) {
      ++spiked;
    }
  }
  // The one-second spike of one worker out of 61 reaches the band's top at this zoom.
  QVERIFY(spiked >= 1);
  QVERIFY(valueRound(band[static_cast<std::size_t>(spike_column)].hi) == valueRound(99.0));

  // Zoomed out so the whole run is a few columns: the spike still shows.
  view.setRange(0, secondsToTime(kSeconds * 20));
  panel.refresh(store);
  const auto& wide = chart.drawnBand();
  const int column = chart.grid().columnOf(secondsToTime(kSpikeSecond));
  QCOMPARE(valueRound(wide[static_cast<std::size_t>(column)].hi), valueRound(99.0));
}

void ManyWorkersTest::bandFunctionAgainstRawColumns() {
  // Three workers, four columns; one worker missing in column 2, nobody in column 3.
  std::vector<std::vector<EnvelopeColumn>> e{
      {{true, true, 1, 3}, {true, true, 5, 5}, {true, true, 0, 10}, {false, true, 0, 0}},
      {{true, true, 2, 2}, {true, true, 1, 1}, {false, true, 0, 0}, {false, true, 0, 0}},
      {{true, true, 7, 9}, {true, true, 3, 4}, {true, true, 4, 4}},
  };
  const std::vector<BandColumn> b = workerBand(e);
  QCOMPARE(b.size(), std::size_t(4));
  QCOMPARE(b[0].lo, 1.0);
  QCOMPARE(b[0].hi, 9.0);
  QCOMPARE(b[0].median, 2.0);  // midpoints 2, 2, 8
  QCOMPARE(b[1].lo, 1.0);
  QCOMPARE(b[1].hi, 5.0);
  QCOMPARE(b[1].median, 3.5);  // midpoints 5, 1, 3.5
  QCOMPARE(b[2].workers, 2);
  QCOMPARE(b[2].lo, 0.0);
  QCOMPARE(b[2].hi, 10.0);
  QCOMPARE(b[2].median, 4.0);  // midpoints 5, 4: the lower one
  QVERIFY(!b[3].present);
}

void ManyWorkersTest::selectedWorkersAreTheLines() {
  TelemetryStore store;
  fill(store);
  ViewState view;
  KvPoolPanel panel(view);
  panel.resize(800, 600);
  view.selectWorkers({"D5", "D40"});
  panel.refresh(store);
  QCOMPARE(panel.lineWorkers(), (std::vector<int>{5, 40}));
  QCOMPARE(static_cast<int>(panel.bandWorkers().size()), kDecode - 2);
  QCOMPARE(panel.occupancyChart().seriesName(1), QString("D40"));
  QCOMPARE(panel.sessionsChart().bandLegend(), QString("band: 62 other D (min/median/max)"));
  // Resident sessions are w % 7: the band's max is 6 and its min 0 everywhere.
  for (const BandColumn& b : panel.sessionsChart().drawnBand()) {
    QVERIFY(b.present);
    QCOMPARE(b.lo, 0.0);
    QCOMPARE(b.hi, 6.0);
  }
}

void ManyWorkersTest::fewWorkersKeepOneLineEach() {
  TelemetryStore store;
  RunStarted r;
  for (int w = 0; w < 3; ++w) r.workers.push_back({"D" + std::to_string(w), WorkerRole::Decode, kCapacity});
  r.prefill.push_back({"P0", WorkerRole::Prefill, kCapacity});
  store.ingest(ev(0, r));
  ViewState view;
  KvPoolPanel panel(view);
  panel.refresh(store);
  QCOMPARE(panel.lineWorkers(), (std::vector<int>{0, 1, 2}));
  QVERIFY(panel.bandWorkers().empty());
  QVERIFY(panel.occupancyChart().bandLegend().isEmpty());
  LinkHealthPanel links(view);
  store.ingest(ev(1, Snapshot{{}, {{0, 0, 0, 0, LinkState::Alive}, {0, 1, 0, 0, LinkState::Dead}}}));
  links.refresh(store);
  QVERIFY(!links.aggregated());
  QCOMPARE(links.model().columnCount(), 3);
}

// "Chart X per D" is the gauge's key: the lines, the band and a preview's ghosts all come from the
// gauge the key names, with nothing written for it (here the decode queues).
void ManyWorkersTest::anyGaugeByItsKeyIsAChartPerWorker() {
  // Its unit is what the cursor says after each value: a fraction in %, a count by what it counts.
  QCOMPARE(WorkerChartSpec::of(WorkerGauge::KvFraction).unit, QString("%"));
  QCOMPARE(WorkerChartSpec::of(WorkerGauge::Queued).unit, QString("requests"));
  TelemetryStore store;
  fill(store);
  ViewState view;
  view.setRange(secondsToTime(10), secondsToTime(kSeconds - 10));
  const std::optional<WorkerGauge> queued = workerGaugeNamed("queued");
  QVERIFY(queued);
  WorkerChartPanel panel(view, {WorkerChartSpec::of(*queued)});
  panel.resize(800, 400);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.refresh(store);
  TimeSeriesChart& chart = panel.chart(0);
  QCOMPARE(chart.title(), QString("Queued requests per D"));
  // The longest queues now, ties in worker order; the other 61 in the band, 0 to 12 requests.
  QCOMPARE(panel.lineWorkers(), (std::vector<int>{7, 20, 33}));
  QCOMPARE(chart.bandLegend(), QString("band: 61 other D (min/median/max)"));
  for (const BandColumn& b : chart.drawnBand()) {
    QVERIFY(b.present);
    QCOMPARE(b.lo, 0.0);
    QCOMPARE(b.hi, 12.0);
  }
  for (int line = 0; line < 3; ++line)
    for (const EnvelopeColumn& c : chart.drawnColumns(line))
      if (c.present) QCOMPARE(c.hi, 12.0);

  // A preview's futures of this gauge, by its key: D20's ghosts draw its forecast queue.
  const SimTime from = secondsToTime(kSeconds), to = secondsToTime(kSeconds + 60);
  WhatIfResult preview;
  preview.from = from;
  preview.to = to;
  for (WhatIfFuture* future : {&preview.without, &preview.with}) {
    std::vector<MinMaxSeries>& series = future->per_worker[gaugeKey(*queued)];
    for (int w = 0; w < kDecode; ++w) {
      series.emplace_back();
      for (SimTime t = from; t <= to; t += secondsToTime(1))
        series.back().add(t, future == &preview.with ? 2.0 : 30.0 + w);
    }
    future->per_worker["kv_fraction"].resize(kDecode);  // another gauge: not this chart's
  }
  view.setRange(from - secondsToTime(60), to);
  panel.setPreview(&preview);
  panel.refresh(store);
  QVERIFY(panel.showsPreview());
  // Series: 3 lines, then 3 ghosts without the change, then 3 with it.
  QCOMPARE(chart.seriesCount(), 9);
  QCOMPARE(chart.seriesName(4), QString("D20 without the change"));
  auto drawnMax = [&](int series) {
    double most = -1;
    for (const EnvelopeColumn& c : chart.drawnColumns(series))
      if (c.present) most = std::max(most, c.hi);
    return most;
  };
  QCOMPARE(drawnMax(4), 50.0);  // 30 + 20
  QCOMPARE(drawnMax(7), 2.0);
  // A future without this gauge draws no ghost.
  for (WhatIfFuture* future : {&preview.without, &preview.with}) future->per_worker.erase(gaugeKey(*queued));
  panel.setPreview(&preview);
  panel.refresh(store);
  QCOMPARE(drawnMax(4), -1.0);
}

void ManyWorkersTest::linksAggregateByPrefillAndDecodeWithDrillDown() {
  TelemetryStore store;
  fill(store);
  const SimTime t = secondsToTime(kSeconds) + 1;
  store.ingest(std::vector<Event>{ev(t, LinkHealth{3, 10, LinkState::Dead, "handshake timeout", 4}),
                                  ev(t + 1, LinkHealth{3, 11, LinkState::Suspect, "transfer slow", 0}),
                                  ev(t + 2, LinkHealth{7, 10, LinkState::Suspect, "transfer slow too", 0})});
  ViewState view;
  LinkHealthPanel panel(view);
  QAbstractItemModelTester tester(&panel.aggregate(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  panel.refresh(store);
  QVERIFY(panel.aggregated());
  LinkAggregateModel& m = panel.aggregate();
  auto cell = [&](int row, int column) { return m.data(m.index(row, column), Qt::UserRole); };
  QCOMPARE(m.rowCount(), kPrefill);
  QCOMPARE(cell(0, LinkAggregateModel::Name).toString(), QString("P3"));
  QCOMPARE(cell(0, LinkAggregateModel::Links).toInt(), 64);
  QCOMPARE(cell(0, LinkAggregateModel::Alive).toInt(), 62);
  QCOMPARE(cell(0, LinkAggregateModel::Suspect).toInt(), 1);
  QCOMPARE(cell(0, LinkAggregateModel::Dead).toInt(), 1);
  QVERIFY(cell(0, LinkAggregateModel::LastFailure).toString().contains("transfer slow"));
  QCOMPARE(cell(1, LinkAggregateModel::Name).toString(), QString("P7"));
  QCOMPARE(cell(1, LinkAggregateModel::Suspect).toInt(), 1);
  int alive = 0;
  for (int row = 0; row < m.rowCount(); ++row) alive += cell(row, LinkAggregateModel::Alive).toInt();
  QCOMPARE(alive, kPrefill * kDecode - 3);
  QCOMPARE(cell(2, LinkAggregateModel::Alive).toInt(), 64);

  m.setGroupBy(LinkAggregateModel::GroupBy::Decode);
  panel.refresh(store);
  QCOMPARE(m.rowCount(), kDecode);
  QCOMPARE(cell(0, LinkAggregateModel::Name).toString(), QString("D10"));
  QCOMPARE(cell(0, LinkAggregateModel::Links).toInt(), kPrefill);
  QCOMPARE(cell(0, LinkAggregateModel::Dead).toInt(), 1);
  QCOMPARE(cell(0, LinkAggregateModel::Suspect).toInt(), 1);
  QCOMPARE(cell(1, LinkAggregateModel::Name).toString(), QString("D11"));

  // Drill-down by a double-click on P3's row, then back.
  m.setGroupBy(LinkAggregateModel::GroupBy::Prefill);
  panel.refresh(store);
  panel.resize(700, 700);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QTableView& table = panel.aggregateTable();
  const QPoint at = table.visualRect(m.index(0, 0)).center();
  // A double-click as a user makes it: a press and release, then the second press.
  QTest::mouseClick(table.viewport(), Qt::LeftButton, Qt::NoModifier, at);
  QTest::mouseDClick(table.viewport(), Qt::LeftButton, Qt::NoModifier, at);
  QCOMPARE(m.drilled(), QString("P3"));
  QCOMPARE(m.rowCount(), kDecode);
  QCOMPARE(cell(0, LinkAggregateModel::Name).toString(), QString("P3->D10"));
  QCOMPARE(cell(0, LinkAggregateModel::Dead).toInt(), 1);
  QCOMPARE(cell(1, LinkAggregateModel::Name).toString(), QString("P3->D11"));
  QCOMPARE(cell(2, LinkAggregateModel::Alive).toInt(), 1);
  panel.drillInto({});
  QCOMPARE(m.rowCount(), kPrefill);
}

void ManyWorkersTest::timelineGroupsRowsIntoTheirUnion() {
  TelemetryStore store;
  fill(store);
  // Evictions on D3 and D9 in the same instant, D20 later, a crash of D40; one seed P5 -> D3.
  const SimTime t = secondsToTime(100);
  store.ingest(std::vector<Event>{ev(secondsToTime(kSeconds) + 1, Eviction{3, 1, 40'000}),
                                  ev(secondsToTime(kSeconds) + 1, Eviction{9, 2, 50'000}),
                                  ev(secondsToTime(kSeconds) + 200'000, Eviction{20, 3, 60'000}),
                                  ev(secondsToTime(kSeconds) + 400'000, WorkerCrashed{40, "oom", 0})});
  (void)t;
  ViewState view;
  view.setRange(secondsToTime(kSeconds - 1), secondsToTime(kSeconds + 1));
  EventTimelineView timeline(view);
  timeline.resize(1200, 900);
  timeline.setStore(store);
  const TimelineRowGroups& groups = timeline.rowGroups();
  QVERIFY(groups.grouped());
  // 4 D groups, 1 P group, 16 link groups (one per P).
  QCOMPARE(timeline.rowCount(), 4 + 1 + 16);
  QCOMPARE(groups.groupLabel(0), std::string("D0-D15"));
  QCOMPARE(groups.groupLabel(4), std::string("P0-P15"));
  QCOMPARE(groups.groupLabel(5), std::string("P0->D*"));
  QCOMPARE(static_cast<int>(groups.members(5).size()), kDecode);
  QVERIFY(QString::fromStdString(timeline.rowNames()[0]).contains("D0-D15 (16)"));

  auto glyphsOn = [&](int row) {
    long count = 0;
    int glyphs = 0;
    for (const auto& g : timeline.drawnGlyphs())
      if (g.row == row) count += g.count, ++glyphs;
    return std::pair(glyphs, count);
  };
  // D3 and D9 fold into one glyph of two on the D0-D15 row; D20 on D16-D31; D40 on D32-D47.
  QCOMPARE(glyphsOn(0), std::pair(1, 2L));
  QCOMPARE(glyphsOn(1), std::pair(1, 1L));
  QCOMPARE(glyphsOn(2), std::pair(1, 1L));
  QCOMPARE(glyphsOn(3), std::pair(0, 0L));

  // Open the first group: its members get their own rows under the header.
  QVERIFY(timeline.toggleGroup(0));
  QCOMPARE(timeline.rowCount(), 4 + 1 + 16 + 16);
  QCOMPARE(QString::fromStdString(timeline.rowNames()[1 + 3]).trimmed(), QString("D3"));
  QCOMPARE(glyphsOn(1 + 3), std::pair(1, 1L));
  QCOMPARE(glyphsOn(1 + 9), std::pair(1, 1L));
  QCOMPARE(glyphsOn(0), std::pair(0, 0L));
  QCOMPARE(glyphsOn(17), std::pair(1, 1L));  // D16-D31 moved down by 16 rows
  QVERIFY(!timeline.toggleGroup(1));         // a member row is no group
  QVERIFY(timeline.toggleGroup(0));
  QCOMPARE(timeline.rowCount(), 21);
}

QTEST_MAIN(ManyWorkersTest)
#include "test_many_workers.moc"
