// The decode-load, KV-pool, link-health and latency panels fed with real simulations: the cold
// decode worker is marked, the charts keep the spike and draw one run of pixels per column, the link
// grid shows dead links with their reason.
#include <QAbstractItemModelTester>
#include <QTableWidget>
#include <QtTest>

#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"
#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/LatencyPanel.h"
#include "widgets/charts/LinkHealthModel.h"
#include "widgets/charts/LinkHealthPanel.h"
#include "widgets/common/ViewState.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {
// Feeds the store in frame-sized batches and refreshes `refresh` after each, as the console does.
template <typename Refresh>
void play(const std::string& scenario, double seconds, TelemetryStore& store, Refresh refresh) {
  EventLog log;
  SimulationOptions options;
  options.duration_s = seconds;
  simulate(scenario, {}, options, &log);
  for (std::size_t i = 0; i < log.events.size(); i += 2000) {
    store.ingest(std::vector<Event>(log.events.begin() + static_cast<long>(i),
                                    log.events.begin() + static_cast<long>(std::min(log.events.size(), i + 2000))));
    refresh();
  }
}
}  // namespace

class LoadPanelsTest : public QObject {
  Q_OBJECT
 private slots:
  void coldDecodeWorkerIsMarked_data();
  void coldDecodeWorkerIsMarked();
  void kvChartDrawsDecimatedPointsWithThePeak();
  void linkGridShowsDeadLinksWithReason();
  void latencyPanelMatchesTheStore();
  void kvUseSaysTheBlocksTheEngineHolds();
  void prefixHitIsTheEnginesOwnLive();
};

// A live worker's engine counts its prefix-cache lookups and hits (vLLM's prefix_cache_queries /
// hits, SGLang's prompt / cached tokens): the table shows its hit rate over the last minute, from
// the counters' growth between snapshots; a worker whose engine says nothing shows "-".
void LoadPanelsTest::prefixHitIsTheEnginesOwnLive() {
  ViewState view;
  DecodeLoadPanel panel(view);
  TelemetryStore store;
  RunStarted run;
  run.scenario = "live";
  run.workers = {{"D0", WorkerRole::Decode, 1000}, {"D1", WorkerRole::Decode, 1000}};
  std::vector<Event> events{Event{0, 0, run}};
  for (int i = 1; i <= 3; ++i) {
    Snapshot s;
    WorkerGauges d0, d1;
    d0.worker = 0;
    d0.kv_capacity = 1000;
    d0.prefix_queried_tokens = 4000 * i;  // +4,000 tokens looked up per snapshot, 3,000 of them hits
    d0.prefix_hit_tokens = 3000 * i;
    d1.worker = 1;
    d1.kv_capacity = 1000;
    s.workers = {d0, d1};
    events.push_back(Event{static_cast<std::uint64_t>(i), secondsToTime(i), s});
  }
  store.ingest(events);
  panel.refresh(store);
  DecodeLoadModel& model = panel.model();
  const QModelIndex d0 = model.index(model.rowOfWorker("D0"), DecodeLoadModel::PrefixHit);
  QCOMPARE(model.data(d0, Qt::DisplayRole).toString(), QString("75.0 %"));
  const QString tip = model.data(d0, Qt::ToolTipRole).toString();
  QVERIFY2(tip.contains("of 12000 prompt tokens") && tip.contains("the engine's own counters"), qPrintable(tip));
  QCOMPARE(model.data(model.index(model.rowOfWorker("D1"), DecodeLoadModel::PrefixHit), Qt::DisplayRole).toString(),
           QString("-"));
  QCOMPARE(model.headerData(DecodeLoadModel::PrefixHit, Qt::Horizontal, Qt::DisplayRole).toString(),
           QString("prefix hit"));
}

// A live worker followed through its engine's KV events: the KV use cell says how many blocks the
// engine holds; one without a feed says only its tokens.
void LoadPanelsTest::kvUseSaysTheBlocksTheEngineHolds() {
  ViewState view;
  DecodeLoadPanel panel(view);
  TelemetryStore store;
  RunStarted run;
  run.scenario = "live";
  run.workers = {{"D0", WorkerRole::Decode, 1000}, {"D1", WorkerRole::Decode, 1000}};
  Snapshot s;
  WorkerGauges d0, d1;
  d0.worker = 0;
  d0.kv_used = 32;
  d0.kv_capacity = 1000;
  d0.kv_event_blocks = 2;
  d1.worker = 1;
  d1.kv_capacity = 1000;
  s.workers = {d0, d1};
  Snapshot later = s;
  later.workers[0].kv_event_stored = 40;  // 40 stored and 10 removed in the 2 s since
  later.workers[0].kv_event_removed = 10;
  store.ingest({Event{0, 0, run}, Event{1, secondsToTime(1), s}, Event{2, secondsToTime(3), later}});
  panel.refresh(store);
  DecodeLoadModel& model = panel.model();
  QCOMPARE(model.rowCount(), 2);
  const QString fed =
      model.data(model.index(model.rowOfWorker("D0"), DecodeLoadModel::KvUse), Qt::ToolTipRole).toString();
  QVERIFY2(fed.contains("32 tokens in use; its engine holds 2 cached blocks (from its KV events), storing 20.0 and "
                        "removing 5.0 blocks/s"),
           qPrintable(fed));
  const QString plain =
      model.data(model.index(model.rowOfWorker("D1"), DecodeLoadModel::KvUse), Qt::ToolTipRole).toString();
  QVERIFY2(!plain.contains("cached blocks"), qPrintable(plain));
}

void LoadPanelsTest::coldDecodeWorkerIsMarked_data() {
  QTest::addColumn<QString>("scenario");
  QTest::addColumn<QString>("starving");  // empty: none
  QTest::newRow("e2-cold-d: D2 starves") << "e2-cold-d"
                                         << "D2";
  QTest::newRow("e3-load-floor: balanced") << "e3-load-floor"
                                           << "";
}

void LoadPanelsTest::coldDecodeWorkerIsMarked() {
  QFETCH(QString, scenario);
  QFETCH(QString, starving);
  ViewState view;
  DecodeLoadPanel panel(view);
  QAbstractItemModelTester tester(&panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  TelemetryStore store;
  play(scenario.toStdString(), 900, store, [&] { panel.refresh(store); });
  DecodeLoadModel& model = panel.model();
  QCOMPARE(model.rowCount(), 3);
  for (int row = 0; row < model.rowCount(); ++row) {
    const QString name = model.data(model.index(row, DecodeLoadModel::Worker), Qt::DisplayRole).toString();
    const bool expected = name == starving;
    QVERIFY2(model.starving(row) == expected, qPrintable(name));
    const QString state = model.data(model.index(row, DecodeLoadModel::State), Qt::DisplayRole).toString();
    QCOMPARE(state.startsWith("cold: "), expected);
    QCOMPARE(model.data(model.index(row, DecodeLoadModel::State), Qt::UserRole).toString() == "cold", expected);
    // The state's swatch, never a tint of the whole row (it read as a selection).
    QVERIFY(model.data(model.index(row, DecodeLoadModel::State), Qt::DecorationRole).isValid());
    QVERIFY(!model.data(model.index(row, DecodeLoadModel::Worker), Qt::BackgroundRole).isValid());
  }
  // Shares add up to the whole.
  double total = 0;
  for (int row = 0; row < model.rowCount(); ++row)
    total += model.data(model.index(row, DecodeLoadModel::Share), Qt::UserRole).toDouble();
  QVERIFY(qAbs(total - 1.0) < 1e-9);
}

void LoadPanelsTest::kvChartDrawsDecimatedPointsWithThePeak() {
  ViewState view;
  view.setLiveWindow(secondsToTime(3600));
  KvPoolPanel panel(view);
  panel.resize(900, 600);
  panel.show();
  TelemetryStore store;
  play("evict-storm", 3600, store, [&] {
    view.advanceLive(store.now());
    panel.refresh(store);
  });
  TimeSeriesChart& chart = panel.occupancyChart();
  QCOMPARE(chart.seriesCount(), 3 + 2 * 3);  // the workers, then two preview ghosts each (empty)
  // One entry per pixel column per series, although the hour holds 3,600 snapshots each.
  QCOMPARE(static_cast<int>(chart.drawnColumns(0).size()), chart.plotColumns());
  // The drawn line reaches each worker's true peak (in percent).
  for (int s = 0; s < 3; ++s) {
    double drawn = 0;
    for (const EnvelopeColumn& c : chart.drawnColumns(s))
      if (c.present) drawn = std::max(drawn, c.hi);
    const double peak =
        store.workers()[static_cast<std::size_t>(s)].gauge(WorkerGauge::KvFraction).maxIn(0, store.now()) * 100;
    QCOMPARE(drawn, peak);
  }
  QVERIFY(!panel.grab().isNull());
}

void LoadPanelsTest::linkGridShowsDeadLinksWithReason() {
  ViewState view;
  LinkHealthPanel panel(view);
  QAbstractItemModelTester tester(&panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  TelemetryStore store;
  bool saw_dead = false;
  play("cascade", 600, store, [&] {
    panel.refresh(store);
    for (int c = 0; c < panel.model().columnCount(); ++c)
      saw_dead |=
          panel.model().data(panel.model().index(0, c), Qt::UserRole).toInt() == static_cast<int>(LinkState::Dead);
  });
  QCOMPARE(panel.model().rowCount(), 1);
  QCOMPARE(panel.model().columnCount(), 3);
  QVERIFY(saw_dead);
  QVERIFY(panel.failureText().contains("P0->D"));
  bool reason = false;
  for (int c = 0; c < 3; ++c)
    reason |= panel.model().data(panel.model().index(0, c), Qt::ToolTipRole).toString().contains("last failure");
  QVERIFY(reason);
}

void LoadPanelsTest::latencyPanelMatchesTheStore() {
  ViewState view;
  LatencyPanel panel(view);
  TelemetryStore store;
  play("e3-load-floor", 600, store, [&] { panel.refresh(store); });
  panel.setWindowSeconds(60);
  panel.refresh(store);
  const LatencyWindow w = store.latencyWindow(60);
  QVERIFY(w.requests > 0);
  QCOMPARE(panel.table().item(0, 2)->text(), QString::number(w.ttft_s.p99, 'f', 3));
  QCOMPARE(panel.table().item(1, 0)->text(), QString::number(w.e2e_s.p50, 'f', 3));
}

QTEST_MAIN(LoadPanelsTest)
#include "test_load_panels.moc"
