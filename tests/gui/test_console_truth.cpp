// The console tells the truth at a glance, checked on the real window offscreen:
// - after a replay seek (backwards and forwards) the charts show the whole run up to the new time,
//   column by column equal to a brute-force pass over the recording, and the diagnosis equals
//   `report` of the same events;
// - `kvscope --screenshot --summary` names the same findings as `kvscope-cli simulate` for every
//   bundled scenario, and its workers' states are the decode-load panel's;
// (The default layout's fit on the screen is test_console_layout.cpp.)
#include <QAbstractScrollArea>
#include <QAction>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableView>
#include <QtTest>

#include "app/gui/MainWindow.h"
#include "app/gui/PanelDocks.h"
#include "app/gui/PreviewController.h"
#include "app/gui/SourceFactory.h"
#include "backend/recording/RecordingPlayer.h"
#include "core/metrics/RunAnalysis.h"
#include "core/run/WhatIfPreview.h"
#include "core/source/EmbeddedSimulationSource.h"
#include "tests/support/ChartTruth.h"
#include "tests/support/CliRunner.h"
#include "tests/support/ConsoleWindow.h"
#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/LatencyPanel.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"
#include "widgets/diagnosis/DiagnosisPanel.h"
#include "widgets/diagnosis/FindingsModel.h"
#include "widgets/knobs/KnobsPanel.h"
#include "widgets/knobs/WhatIfPanel.h"
#include "widgets/knobs/WhatIfTable.h"
#include "widgets/timeline/EventTimelinePanel.h"
#include "widgets/timeline/EventTimelineView.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {
std::vector<Event> readAll(const QString& path) {
  struct Keep : EventSink {
    std::vector<Event> events;
    void onEvent(const Event& e) override { events.push_back(e); }
  } keep;
  RecordingPlayer player(path.toStdString());
  player.play(keep);
  return keep.events;
}

QString findingKey(const QString& mode, const QStringList& subjects, double start, double end) {
  return QStringLiteral("%1 [%2] %3-%4").arg(mode, subjects.join(',')).arg(start, 0, 'f', 1).arg(end, 0, 'f', 1);
}

// Replays `recording` as fast as it reads, to its end, paused there.
void replayWhole(MainWindow& window, const QString& recording) {
  test::openRecording(window, recording, 0);
  QTRY_VERIFY_WITH_TIMEOUT(window.session().store().finished(), 60000);
  window.session().source()->control()->pause(consoleAuthor());
}

// A seek returns once the restated run is staged (the replay is paused: nothing follows it); one
// frame takes it in.
void settleAt(MainWindow& window, SimTime time) {
  const TelemetryStore& store = window.session().store();
  window.session().drainNow();
  QCOMPARE(store.now(), time);
  window.docks().refresh(store, true);
}
// Sets K=200 pending on a paused e2-cold-d at >= 40 s and checks what the preview shows: D2, cold
// while K is 0, gets a larger share with the change; the table says so; the ghosts are drawn in a
// view that reaches into the future.
void checkColdDecodePreview(MainWindow& window) {
  const TelemetryStore& store = window.session().store();
  QSignalSpy shown(&window.preview(), &PreviewController::previewShown);
  KnobsPanel& knobs = window.docks().knobs();
  QVERIFY(knobs.setPendingValue("K", 200));
  QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 60000);
  const WhatIfResult* r = window.preview().last();
  QVERIFY(r);
  auto share = [](const RunSummary& s, const char* worker) {
    for (const auto& w : s.workers)
      if (w.id == worker) return w.share;
    return -1.0;
  };
  QVERIFY2(
      share(r->with.horizon, "D2") > share(r->without.horizon, "D2") + 0.1,
      qPrintable(QStringLiteral("%1 vs %2").arg(share(r->with.horizon, "D2")).arg(share(r->without.horizon, "D2"))));
  QVERIFY(window.docks().whatIf().table().text().contains("D2 share"));
  window.docks().refresh(store, true);
  TimeSeriesChart& kv = window.docks().kvPools().occupancyChart();
  QVERIFY(window.view().to() >= r->to - secondsToTime(1));
  int ghost_columns = 0;
  for (int s = 0; s < kv.seriesCount(); ++s)
    if (kv.seriesName(s).endsWith("with the change"))
      for (const EnvelopeColumn& c : kv.drawnColumns(s)) ghost_columns += c.present;
  QVERIFY(ghost_columns > 10);
  // The futures' finished requests on the latency chart, as points.
  TimeSeriesChart& latency = window.docks().latency().chart();
  int latency_ghosts = 0;
  for (int s = 0; s < latency.seriesCount(); ++s)
    if (latency.seriesName(s).endsWith("with the change"))
      for (const EnvelopeColumn& c : latency.drawnColumns(s)) latency_ghosts += c.present;
  QVERIFY2(latency_ghosts > 10, qPrintable(QString::number(latency_ghosts)));
}
}  // namespace

class ConsoleTruthTest : public QObject {
  Q_OBJECT
 private slots:
  void init() {
    QCoreApplication::setOrganizationName("KVScopeTest");
    QSettings().clear();
  }

  void seekRebuildsChartsAndDiagnosisUpToTheNewTime() {
    QTemporaryDir dir;
    const QString recording = dir.filePath("cold.kvrec");
    RUN_EXPECT(rec, 0, {"simulate", "--scenario", "e2-cold-d", "--duration", "1466", "--record", recording});
    const std::vector<Event> events = readAll(recording);

    MainWindow window;
    replayWhole(window, recording);
    if (QTest::currentTestFailed()) return;
    const TelemetryStore& store = window.session().store();
    // Backwards to 400 s, then forwards to 1200 s: each time the whole run up to there.
    for (const double target_s : {400.0, 1200.0}) {
      const SimTime target = secondsToTime(target_s);
      std::string error;
      QVERIFY2(window.session().source()->control()->seek(target, consoleAuthor(), &error), error.c_str());
      settleAt(window, target);
      const QString where = QStringLiteral("after a seek to %1 s").arg(target_s);
      // Everything before the target is in the store again: the first snapshot is at the start.
      QVERIFY2(store.workers()[0].gauge(WorkerGauge::KvFraction).firstTime() <= secondsToTime(2), qPrintable(where));
      window.view().setRange(0, target);
      window.docks().refresh(store, true);
      TimeSeriesChart& chart = window.docks().kvPools().occupancyChart();
      int checked = 0;
      for (int s = 0; s < chart.seriesCount(); ++s) {
        WorkerId worker = kNoWorker;  // the ghost series of a preview match no worker
        for (std::size_t i = 0; i < store.workers().size(); ++i)
          if (QString::fromStdString(store.workers()[i].info.name) == chart.seriesName(s))
            worker = static_cast<WorkerId>(i);
        if (worker == kNoWorker) continue;
        ++checked;
        const auto samples = kvSamples(events, worker, target);
        const ColumnGrid g = chart.grid();
        const auto expected = bruteForce(samples, g, true, medianGap(samples), store.now(), 100.0);
        const auto& drawn = chart.drawnColumns(s);
        QCOMPARE(static_cast<int>(drawn.size()), g.columns);
        for (int c = 0; c < g.columns; ++c) {
          const auto& e = expected[static_cast<std::size_t>(c)];
          const auto& d = drawn[static_cast<std::size_t>(c)];
          QVERIFY2(e.present == d.present && (!e.present || (e.lo == d.lo && e.hi == d.hi)),
                   qPrintable(QStringLiteral("%1, %2 column %3: drawn %4..%5, samples %6..%7")
                                  .arg(where, chart.seriesName(s))
                                  .arg(c)
                                  .arg(d.lo)
                                  .arg(d.hi)
                                  .arg(e.lo)
                                  .arg(e.hi)));
        }
      }
      QCOMPARE(checked, 3);
      // The diagnosis is `report`'s of the same events.
      RunAnalysis analysis;
      for (const Event& e : events)
        if (e.time < target) analysis.onEvent(e);
      QStringList want, got;
      for (const Finding& f : analysis.summary().diagnosis) want << QString::fromStdString(f.mode + " " + f.name);
      for (const Finding& f : store.findings()) got << QString::fromStdString(f.mode + " " + f.name);
      QCOMPARE(got, want);
    }
  }

  // A run imported from its logs (tests/data/import_run): the replay shows what the logs say, the
  // diagnosis names the crash, the link failure and the cold D, and the worker strip shows D1
  // crashed then restarted and D2 cold by the workers' own running-request gauges (no bindings are
  // known from logs).
  void anImportedRunShowsItsFailures() {
    QTemporaryDir dir;
    const QString recording = dir.filePath("import.kvrec");
    RUN_EXPECT(
        imp, 0,
        {"import", "--cluster", QString::fromStdString(testDataPath("import_run/cluster.yaml")), "-o", recording});
    MainWindow window;
    replayWhole(window, recording);
    if (QTest::currentTestFailed()) return;
    const TelemetryStore& store = window.session().store();
    const auto stateAt = [&](double t_s) {
      std::string error;
      if (!window.session().source()->control()->seek(secondsToTime(t_s), consoleAuthor(), &error))
        return QStringList{QString::fromStdString(error)};
      window.session().drainNow();
      window.docks().refresh(store, true);
      QStringList states;
      const DecodeLoadModel& load = window.docks().decodeLoad().model();
      for (int row = 0; row < load.rowCount(); ++row)
        states << QString::fromStdString(load.state(row).worker + " " + toString(load.state(row).kind));
      states.sort();
      return states;
    };
    QCOMPARE(stateAt(330), (QStringList{"D0 ok", "D1 crashed", "D2 cold"}));
    QCOMPARE(stateAt(400), (QStringList{"D0 ok", "D1 restarted", "D2 cold"}));
    QCOMPARE(stateAt(599), (QStringList{"D0 ok", "D1 ok", "D2 cold"}));
    auto* diagnosis = qobject_cast<DiagnosisPanel*>(window.docks().panel("diagnosis"));
    QVERIFY(diagnosis);
    QStringList shown;
    for (const Finding& f : diagnosis->model()->findings()) {
      QStringList subjects;
      for (const auto& x : f.subjects) subjects << QString::fromStdString(x);
      shown << QString::fromStdString(f.mode) + " " + subjects.join(',') + (f.resolved ? " resolved" : "");
    }
    // D1 was down from its crash to its restart: that stays on the list, resolved.
    QCOMPARE(shown, (QStringList{"A P0->D0", "B D2", "D D1", "H D1 resolved"}));
    // The link the logs failed is what the links panel last heard about it.
    const LinkSeries* link = store.link(0, 0);
    QVERIFY(link);
    QVERIFY2(QString::fromStdString(link->last_failure).contains("Decode instance could be dead"),
             link->last_failure.c_str());
  }

  // Past e2-cold-d's sessions' start (they join over its first 300 s) K can no longer act: the
  // diagnosis's fix button previews the real fix, the exclusive-overlap policy, as a pending
  // policy in the knobs panel, and the preview comes back.
  void aPolicyFixIsPreviewedWhereKCanNoLongerAct() {
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.openSource(std::make_unique<EmbeddedSimulationSource>("e2-cold-d", SimulationOptions{}, 100));
    const TelemetryStore& store = window.session().store();
    QTRY_VERIFY_WITH_TIMEOUT(store.now() >= secondsToTime(650), 120000);
    window.togglePause();
    QTRY_VERIFY_WITH_TIMEOUT(window.statusText().contains("paused"), 30000);
    window.session().drainNow();
    window.docks().refresh(store, true);
    const std::optional<SimTime> last = store.lastNewSession();
    QVERIFY(last && store.now() - *last > secondsToTime(kNewSessionsWindowS));
    auto* diagnosis = qobject_cast<DiagnosisPanel*>(window.docks().panel("diagnosis"));
    QVERIFY(diagnosis);
    int row = -1;
    for (int r = 0; r < diagnosis->model()->rowCount(); ++r)
      if (diagnosis->model()->finding(r)->mode == "B" && !diagnosis->model()->finding(r)->resolved) row = r;
    QVERIFY(row >= 0);
    diagnosis->table()->setCurrentIndex(diagnosis->model()->index(row, FindingsModel::Name));
    auto* preview = diagnosis->findChild<QPushButton*>(QStringLiteral("previewFix"));
    QVERIFY(preview && preview->isEnabled());
    QCOMPARE(preview->text(), QStringLiteral("Preview policy fix"));
    QSignalSpy shown(&window.preview(), &PreviewController::previewShown);
    QTest::mouseClick(preview, Qt::LeftButton);
    const KnobsPanel& knobs = window.docks().knobs();
    QCOMPARE(knobs.edits().edits().policy.value_or(""), std::string("exclusive-overlap"));
    QVERIFY(knobs.edits().edits().knobs.empty());  // not K: it would change nothing now
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 60000);
    QVERIFY(window.preview().last());
  }

  // A pending K on e2-cold-d while sessions still join: the preview forks the run, draws both
  // futures as ghosts and says the cold D gets bindings with the change; the rho line dragged on
  // the KV chart becomes a pending value; Apply commits and the preview goes away.
  void previewShowsBothFuturesAndDragSetsAKnob() {
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.openSource(std::make_unique<EmbeddedSimulationSource>("e2-cold-d", SimulationOptions{}, 40));
    const TelemetryStore& store = window.session().store();
    QTRY_VERIFY_WITH_TIMEOUT(store.now() >= secondsToTime(40), 60000);
    window.togglePause();
    checkColdDecodePreview(window);
    if (QTest::currentTestFailed()) return;
    KnobsPanel& knobs = window.docks().knobs();
    TimeSeriesChart& kv = window.docks().kvPools().occupancyChart();

    // Drag the rho line down by 40 px: rho becomes a pending value below the run's.
    const double rho_before = store.knobs().at("rho");
    const QRect plot = kv.plotRect();
    const QPoint grip(plot.right() - 3, kv.yOf(rho_before * 100));
    QTest::mousePress(&kv, Qt::LeftButton, {}, grip);
    for (int dy = 5; dy <= 40; dy += 5) {
      QMouseEvent move(QEvent::MouseMove, QPointF(grip + QPoint(0, dy)), kv.mapToGlobal(QPointF(grip + QPoint(0, dy))),
                       Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
      QApplication::sendEvent(&kv, &move);
    }
    QTest::mouseRelease(&kv, Qt::LeftButton, {}, grip + QPoint(0, 40));
    const auto edits = knobs.edits().edits();
    QVERIFY(edits.knobs.count("rho"));
    QVERIFY2(edits.knobs.at("rho") < rho_before, qPrintable(QString::number(edits.knobs.at("rho"))));
    QCOMPARE(edits.knobs.at("K"), 200.0);

    knobs.applyEdits();
    QTRY_VERIFY_WITH_TIMEOUT(store.knobs().at("K") == 200.0, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(!window.preview().last(), 10000);
    QCOMPARE(window.view().lookahead(), SimTime{0});
  }

  // A shown preview is not forked again while the run goes on (nothing changed but time); Apply
  // refuses it once the run has moved a tenth of the horizon past its fork, and previews again
  // from now: what Apply would do is what the new preview shows, then a second Apply sends it.
  void aStalePreviewIsForkedAgainAtApply() {
    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.openSource(std::make_unique<EmbeddedSimulationSource>("e3-load-floor", SimulationOptions{}, 40));
    const TelemetryStore& store = window.session().store();
    QTRY_VERIFY_WITH_TIMEOUT(store.now() >= secondsToTime(20), 60000);
    QSignalSpy shown(&window.preview(), &PreviewController::previewShown);
    KnobsPanel& knobs = window.docks().knobs();
    QVERIFY(knobs.setPendingValue("session_soft_cap", 6));
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 1, 60000);
    const SimTime first = window.preview().last()->from;
    QTRY_VERIFY_WITH_TIMEOUT(store.now() >= first + secondsToTime(80), 60000);
    QCOMPARE(shown.count(), 1);  // the run moved on; no fork by itself

    const double cap_before = store.knobs().at("session_soft_cap");
    knobs.applyEdits();
    auto* status = knobs.findChild<QLabel*>(QStringLiteral("status"));
    QVERIFY(status);
    QVERIFY2(status->text().contains(QStringLiteral("Not applied: the preview was")), qPrintable(status->text()));
    QCOMPARE(store.knobs().at("session_soft_cap"), cap_before);
    QVERIFY(knobs.edits().edits().knobs.count("session_soft_cap"));  // still pending
    QTRY_VERIFY_WITH_TIMEOUT(shown.count() >= 2, 60000);
    const SimTime second = window.preview().last()->from;
    QVERIFY2(second >= first + secondsToTime(80), qPrintable(QStringLiteral("%1 then %2").arg(first).arg(second)));
    knobs.applyEdits();  // fresh (unless this machine took over 60 simulated s to show it)
    if (store.now() - second < secondsToTime(60)) {
      QTRY_VERIFY_WITH_TIMEOUT(store.knobs().at("session_soft_cap") == 6.0, 30000);
      QTRY_VERIFY_WITH_TIMEOUT(!window.preview().last(), 10000);
    }
  }

  // The same on a simulation served by `kvscope-cli serve`: the server forks its own run
  // (Control.Preview) and the console draws what comes back.
  void previewOfAServedSimulation() {
    QProcess server;
    server.start(KVSCOPE_CLI, {"serve", "--scenario", "e2-cold-d", "--speed", "40", "--listen", "127.0.0.1:0"});
    QVERIFY(server.waitForStarted());
    QByteArray line;
    const auto readLine = [&] {
      line += server.readAllStandardOutput();
      return line.contains('\n');
    };
    QTRY_VERIFY_WITH_TIMEOUT(readLine(), 60000);
    line = line.left(line.indexOf('\n'));
    QVERIFY2(line.startsWith("listening on "), line.constData());
    SourceSpec spec;
    spec.kind = SourceSpec::Remote;
    spec.target = line.mid(13).trimmed().toStdString();
    {
      MainWindow window;
      window.resize(1600, 1000);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      window.openSource(makeSource(spec));
      const TelemetryStore& store = window.session().store();
      QTRY_VERIFY_WITH_TIMEOUT(store.now() >= secondsToTime(40), 60000);
      window.togglePause();
      checkColdDecodePreview(window);
      if (QTest::currentTestFailed()) return;
      // Nothing changed on the server: a preview is not a change.
      QCOMPARE(store.knobs().at("K"), 0.0);
      QVERIFY(window.docks().whatIf().table().text().contains("same seed"));
    }
    server.terminate();
    QVERIFY(server.waitForFinished(30000));
  }

  void screenshotSummaryNamesWhatSimulateFinds_data() {
    QTest::addColumn<QString>("scenario");
    for (const char* s : {"e2-cold-d", "e3-load-floor", "evict-storm", "cascade", "invariant-crash", "reseed-storm",
                          "block-level-eviction", "unified-vs-lmetric"})
      QTest::newRow(s) << s;
  }

  void screenshotSummaryNamesWhatSimulateFinds() {
    QFETCH(QString, scenario);
    QTemporaryDir dir;
    const QString png = dir.filePath("shot.png"), json = dir.filePath("shot.json");
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", dir.path());  // no saved layout of the user's
    gui.setProcessEnvironment(env);
    gui.start(KVSCOPE_GUI, {"--scenario", scenario, "--screenshot", png, "--run-for", "900", "--summary", json,
                            "--size", "1280x800"});
    QVERIFY(gui.waitForFinished(120000));
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    QCOMPARE(QImage(png).size(), QSize(1280, 800));
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject window = QJsonDocument::fromJson(file.readAll()).object();
    RUN_EXPECT(cli, 0, {"simulate", "--scenario", scenario, "--duration", "900", "--format", "json"});
    const QJsonObject simulated = QJsonDocument::fromJson(cli.out).object();
    QStringList want, got;
    for (const QJsonValue v : simulated["diagnosis"].toArray()) {
      const QJsonObject f = v.toObject();
      QStringList subjects;
      for (const QJsonValue s : f["subjects"].toArray()) subjects << s.toString();
      want << findingKey(f["mode"].toString(), subjects, f["window_s"].toArray()[0].toDouble(),
                         f["window_s"].toArray()[1].toDouble());
    }
    for (const QJsonValue v : window["findings"].toArray()) {
      const QJsonObject f = v.toObject();
      QStringList subjects;
      for (const QJsonValue s : f["subjects"].toArray()) subjects << s.toString();
      got << findingKey(f["mode"].toString(), subjects, f["start_s"].toDouble(), f["end_s"].toDouble());
    }
    QCOMPARE(got, want);
    // Every serving worker (decode, or instance in a unified cluster) with a state and its cause.
    int decode = 0;
    for (const QJsonValue v : simulated["workers"].toArray()) decode += v.toObject()["role"].toString() != "prefill";
    QCOMPARE(window["workers"].toArray().size(), decode);
    for (const QJsonValue v : window["workers"].toArray()) QVERIFY(!v.toObject()["cause"].toString().isEmpty());
  }
};

QTEST_MAIN(ConsoleTruthTest)
#include "test_console_truth.moc"
