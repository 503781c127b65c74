// The console on a live cluster (`kvscope --live cluster.yaml`), offscreen: a
// real local HTTP server serves the published SGLang /metrics sample for D0, D1's /metrics refuses
// connections, and the test appends D0's crash to its real log file. The window shows the decode
// workers with their load, the unreachable one in the status bar and the panel, the crash on the
// timeline; a bad cluster file is refused with the loader's file:line message, from the File menu
// (keeping the current source) and from the command line (exit 1).
#include <QMessageBox>
#include <QSettings>
#include <QtTest>

#include <fstream>

#include "app/gui/MainWindow.h"
#include "app/gui/PanelDocks.h"
#include "app/gui/SourceFactory.h"
#include "app/gui/SourceMenu.h"
#include "tests/support/ChartTruth.h"
#include "tests/support/FakeSglangCluster.h"
#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/LinkHealthModel.h"
#include "widgets/charts/LinkHealthPanel.h"
#include "widgets/common/RunSession.h"
#include "widgets/timeline/EventTimelinePanel.h"

using namespace kvscope;

namespace {
QString cell(MainWindow& window, const QString& worker, int column, int role = Qt::DisplayRole) {
  DecodeLoadModel& model = window.docks().decodeLoad().model();
  const int row = model.rowOfWorker(worker);
  return row < 0 ? QString() : model.data(model.index(row, column), role).toString();
}

long crashesShown(MainWindow& window) {
  auto* panel = qobject_cast<EventTimelinePanel*>(window.docks().panel("timeline"));
  if (!panel) return -1;
  panel->timeline()->grab();  // paints: lastFrame() is what the timeline drew
  return panel->timeline()->lastFrame().shown_by_kind[static_cast<std::size_t>(TimelineKind::Crash)];
}

SourceSpec liveSpec(const std::string& file) {
  SourceSpec spec;
  spec.kind = SourceSpec::Live;
  spec.target = file;
  return spec;
}

// Runs the GUI binary offscreen and returns its exit code, stderr in `err`.
int runGui(const QStringList& args, QByteArray* err, int timeout_ms = 60000) {
  QProcess gui;
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  gui.setProcessEnvironment(env);
  gui.start(KVSCOPE_GUI, args);
  if (!gui.waitForFinished(timeout_ms)) return -1;
  *err = gui.readAllStandardError();
  return gui.exitStatus() == QProcess::NormalExit ? gui.exitCode() : -2;
}

std::string badClusterFile(const QTemporaryDir& dir) {
  const std::string bad = dir.filePath("bad.yaml").toStdString();
  std::ofstream(bad) << "name: broken\nworkers:\n  - id: D0\n    role: decoder\n    logs: d0.log\n";
  return bad;
}
}  // namespace

class LiveConsoleTest : public QObject {
  Q_OBJECT
 private slots:
  void init() {
    QCoreApplication::setOrganizationName("KVScopeTest");
    QSettings().remove("recent");
  }

  void showsWorkersHealthAndTheCrash() {
    QTemporaryDir dir;
    test::FakeSglangCluster fake(dir.path().toStdString());
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    auto* menu = window.findChild<SourceMenu*>();
    QVERIFY(menu);
    QVERIFY(menu->open(liveSpec(fake.file())));
    QVERIFY(QSettings().value("recent").toStringList().contains(QString::fromStdString("live|" + fake.file())));

    // The decode workers, with D0's load from its /metrics (num_running_reqs 162); no row for P0.
    QTRY_COMPARE_WITH_TIMEOUT(cell(window, "D0", DecodeLoadModel::Running), QStringLiteral("162"), 10000);
    DecodeLoadModel& model = window.docks().decodeLoad().model();
    QCOMPARE(model.rowCount(), 2);
    QVERIFY(model.rowOfWorker("D1") >= 0);
    QCOMPARE(model.rowOfWorker("P0"), -1);
    // D1 cannot be scraped: the status bar says so with the reason, the panel marks the worker.
    QTRY_VERIFY_WITH_TIMEOUT(window.statusText().contains("D1 unreachable: GET http://127.0.0.1:"), 10000);
    QVERIFY2(window.statusText().startsWith("live cluster lab-local - running"), qPrintable(window.statusText()));
    QTRY_VERIFY_WITH_TIMEOUT(cell(window, "D1", DecodeLoadModel::State).startsWith("unreachable: "), 10000);
    QVERIFY2(cell(window, "D1", DecodeLoadModel::State).contains(" since "),
             qPrintable(cell(window, "D1", DecodeLoadModel::State)));
    QVERIFY(cell(window, "D1", DecodeLoadModel::State, Qt::ToolTipRole).contains("Connection"));
    // Its Mooncake link is greyed out: state unknown, not "alive".
    auto* links = qobject_cast<LinkHealthPanel*>(window.docks().panel("linkHealth"));
    QVERIFY(links);
    QTRY_VERIFY_WITH_TIMEOUT(
        links->model().data(links->model().index(0, 1), Qt::DisplayRole).toString().startsWith("unknown"), 10000);
    QVERIFY(links->model().data(links->model().index(0, 1), Qt::ToolTipRole).toString().contains("D1 unreachable"));
    QVERIFY(links->model().data(links->model().index(0, 0), Qt::DisplayRole).toString().startsWith("alive"));
    QCOMPARE(cell(window, "D0", DecodeLoadModel::State), QStringLiteral("ok"));
    // Knobs belong to a router section this file does not have; nothing to pause.
    QVERIFY(!window.session().source()->capabilities().knobs);
    QVERIFY(!window.session().source()->capabilities().pause);

    // The KV chart moves with the table (wall-clock samples, one every 0.1 s): every column is what
    // the samples held there, and the newest holds the KV use the table shows.
    QTest::qWait(500);
    window.session().drainNow();
    const TelemetryStore& live = window.session().store();
    window.docks().refresh(live, true);
    TimeSeriesChart& kv = window.docks().kvPools().occupancyChart();
    QCOMPARE(kv.seriesName(0), QStringLiteral("D0"));
    std::vector<test::Sample> samples;
    for (const RawSample& r : live.workers()[0].gauge(WorkerGauge::KvFraction).raw())
      samples.push_back({r.time, r.value, r.peak});
    QVERIFY(samples.size() > 3);
    const ColumnGrid grid = kv.grid();
    const auto expected = test::bruteForce(samples, grid, true, test::medianGap(samples), live.now(), 100.0);
    const auto& columns = kv.drawnColumns(0);
    int newest = -1;
    for (int c = 0; c < grid.columns; ++c) {
      const auto& e = expected[static_cast<std::size_t>(c)];
      const auto& d = columns[static_cast<std::size_t>(c)];
      QVERIFY2(e.present == d.present && (!e.present || (e.lo == d.lo && e.hi == d.hi)),
               qPrintable(QString::number(c)));
      if (d.present) newest = c;
    }
    const double table_kv =
        window.docks()
            .decodeLoad()
            .model()
            .data(window.docks().decodeLoad().model().index(window.docks().decodeLoad().model().rowOfWorker("D0"),
                                                            DecodeLoadModel::KvUse),
                  Qt::UserRole)
            .toDouble() *
        100;
    const EnvelopeColumn& last = columns[static_cast<std::size_t>(newest)];
    QVERIFY2(last.lo - 1e-3 <= table_kv && table_kv <= last.hi + 1e-3,
             qPrintable(QStringLiteral("table %1, chart %2..%3").arg(table_kv).arg(last.lo).arg(last.hi)));

    fake.crashD0();
    QTRY_VERIFY_WITH_TIMEOUT(crashesShown(window) >= 1, 10000);
    bool crash = false;
    for (const Event& e : window.session().store().discreteEvents())
      if (const auto* c = std::get_if<WorkerCrashed>(&e.payload))
        crash = crash || (c->worker == 0 && c->reason.find("AssertionError") != std::string::npos);
    QVERIFY(crash);
  }

  void badClusterFileFromTheMenuKeepsTheSource() {
    QTemporaryDir dir;
    test::FakeSglangCluster fake(dir.path().toStdString());
    MainWindow window;
    window.show();
    auto* menu = window.findChild<SourceMenu*>();
    QVERIFY(menu && menu->open(liveSpec(fake.file())));
    Source* before = window.session().source();
    QString shown;
    QTimer::singleShot(0, this, [&] {
      QTRY_VERIFY(QApplication::activeModalWidget() != nullptr);
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      QVERIFY(box);
      shown = box->text();
      box->accept();
    });
    QVERIFY(!menu->open(liveSpec(badClusterFile(dir))));
    QVERIFY2(shown.contains("bad.yaml:4: field 'workers[0].role'"), qPrintable(shown));
    QCOMPARE(window.session().source(), before);
    QVERIFY(window.statusText().startsWith("live cluster lab-local"));
    QVERIFY(!QSettings().value("recent").toStringList().join(' ').contains("bad.yaml"));
  }

  void commandLine() {
    QTemporaryDir dir;
    QByteArray err;
    // A bad cluster file: the loader's message on stderr, exit 1, no window left behind.
    QCOMPARE(runGui({"--live", QString::fromStdString(badClusterFile(dir))}, &err), 1);
    QVERIFY2(err.contains("bad.yaml:4: field 'workers[0].role': expected prefill, decode or unified"), err.constData());
    // One source at a time, as --scenario, --connect and --replay are with each other.
    QCOMPARE(runGui({"--live", "x.yaml", "--scenario", "e2-cold-d"}, &err), 2);
    QVERIFY2(err.contains("choose one of --scenario, --connect, a recording and --live"), err.constData());
    QCOMPARE(runGui({"--live", "x.yaml", "--replay", "r.kvrec"}, &err), 2);
    QCOMPARE(runGui({"--live", "x.yaml", "r.kvrec"}, &err), 2);  // a recording named alone is --replay
    QCOMPARE(runGui({"a.kvrec", "b.kvrec"}, &err), 2);
    QVERIFY2(err.contains("one recording at a time"), err.constData());
    QCOMPARE(runGui({"--scenario", "e2-cold-d", "--at", "10"}, &err), 2);
    QVERIFY2(err.contains("--at goes with a recording"), err.constData());
    QCOMPARE(runGui({"--live", "x.yaml", "--speed", "2"}, &err), 2);
    QCOMPARE(runGui({"--live", "x.yaml", "--set", "K=200"}, &err), 2);
    // A good one opens: the window renders after a second of the cluster's (wall) time.
    test::FakeSglangCluster fake(dir.path().toStdString());
    const QString png = dir.filePath("live.png");
    QCOMPARE(runGui({"--live", QString::fromStdString(fake.file()), "--screenshot", png, "--run-for", "1"}, &err), 0);
    QVERIFY(!QImage(png).isNull());
  }
};

QTEST_MAIN(LiveConsoleTest)
#include "test_live_console.moc"
