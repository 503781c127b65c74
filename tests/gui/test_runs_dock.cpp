// The console's Runs list on a live session (live sweeps), offscreen: the real
// window watches a small lab-like cluster (FakeSglangCluster); the test marks runs through the
// session's markRun() as `kvscope-cli mark` does through Control.MarkRun, and posts finished
// requests into the cluster's stream as the live adapters do. The Runs dock appears with the first
// marker, lists run 1 and run 2 with their request counts as they complete, shows the open run as
// running, compares against a baseline, opens a run's summary, and a new source clears it.
#include <QDialog>
#include <QDockWidget>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QtTest>

#include "app/gui/MainWindow.h"
#include "backend/source/LiveClusterSource.h"
#include "tests/support/FakeSglangCluster.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"
#include "widgets/runs/MarkedRunTableModel.h"
#include "widgets/runs/RunsDock.h"

using namespace kvscope;
using M = MarkedRunTableModel;

namespace {

// What `kvscope-cli mark` would ask; fails the test when the session refuses it.
void mark(LiveSession& session, RunMarkAction action, std::string name,
          std::vector<std::pair<std::string, std::string>> params = {}) {
  RunMarkResult result;
  session.markRun(RunMarkRequest{action, std::move(name), std::move(params), "sweep.sh", {}},
                  [&](RunMarkResult r) { result = std::move(r); });
  QVERIFY2(result.error.empty(), result.error.c_str());
}

// `n` requests finished on D0 with their first token after `ttft_s`, the last `failed` of them without one.
void finishRequests(LiveSession& session, int n, int failed = 0, double ttft_s = 0.2) {
  static RequestId next = 1;
  for (int i = 0; i < n; ++i) {
    RequestDone d;
    d.request = next++;
    d.worker = 0;
    d.ttft = secondsToTime(ttft_s);
    d.e2e = secondsToTime(1.5);
    if (i >= n - failed) {
      d.status = RequestStatus::Failed;
      d.ttft = -1;
      d.error = "RuntimeError: generate stream ended before producing any token";
    }
    session.cluster().post(std::move(d));
  }
}

QString cell(RunsDock& runs, int row, int column, int role = Qt::DisplayRole) {
  return runs.model().index(row, column).data(role).toString();
}

}  // namespace

class RunsDockTest : public QObject {
  Q_OBJECT
 private slots:
  void init() { QCoreApplication::setOrganizationName("KVScopeTest"); }

  void listsASweepsRunsAsTheyComplete() {
    QTemporaryDir dir;
    test::FakeSglangCluster fake(dir.path().toStdString());
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    window.openSource(std::make_unique<LiveClusterSource>(fake.file()));
    auto* live = dynamic_cast<LiveClusterSource*>(window.session().source());
    QVERIFY(live);
    LiveSession& session = live->session();
    RunsDock& runs = window.runs();
    M& model = runs.model();
    QTest::qWait(300);  // a few frames of an unmarked session
    QVERIFY(!runs.dock().isVisible());
    QCOMPARE(model.rowCount(), 0);

    // Run 1: the dock appears with its marker, the run counts its requests as they come.
    mark(session, RunMarkAction::Start, "k200", {{"K", "200"}});
    finishRequests(session, 3);
    QTRY_VERIFY_WITH_TIMEOUT(runs.dock().isVisible(), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(cell(runs, 0, model.columnOf(M::Requests)), QStringLiteral("3"), 5000);
    QVERIFY(model.index(0, 0).data(M::RunningRole).toBool());
    QVERIFY(cell(runs, 0, model.columnOf(M::Duration)).startsWith("running, "));
    QVERIFY2(runs.statusText().startsWith("run 1 'k200' running for "), qPrintable(runs.statusText()));
    QVERIFY(runs.statusText().endsWith(" · 0 completed"));
    const QString elapsed = cell(runs, 0, model.columnOf(M::Duration)).mid(QStringLiteral("running, ").size());
    QVERIFY2(runs.statusText().contains("running for " + elapsed + " ·"), qPrintable(runs.statusText()));  // one clock

    // Run 2 starts (ending run 1 first, as a script that goes straight on does).
    mark(session, RunMarkAction::Start, "k400", {{"K", "400"}, {"policy", "kv-aware"}});
    finishRequests(session, 5, 1, 0.35);
    QTRY_COMPARE_WITH_TIMEOUT(model.completedCount(), 1, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(cell(runs, 1, model.columnOf(M::Requests)), QStringLiteral("5"), 5000);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(cell(runs, 0, M::NameColumn), QStringLiteral("k200"));
    QCOMPARE(cell(runs, 0, model.columnOf(M::Requests)), QStringLiteral("3"));
    QVERIFY(!model.index(0, 0).data(M::RunningRole).toBool());
    QVERIFY(model.index(1, 0).data(M::RunningRole).toBool());
    QVERIFY(model.index(1, M::NameColumn).data(Qt::FontRole).value<QFont>().italic());
    QCOMPARE(cell(runs, 1, model.parameterColumn("policy")), QStringLiteral("kv-aware"));
    QVERIFY(cell(runs, 0, model.parameterColumn("policy")).isEmpty());
    QVERIFY2(runs.statusText().startsWith("run 2 'k400' running for ") && runs.statusText().endsWith(" · 1 completed"),
             qPrintable(runs.statusText()));

    mark(session, RunMarkAction::End, "");
    QTRY_COMPARE_WITH_TIMEOUT(model.completedCount(), 2, 5000);
    QCOMPARE(cell(runs, 1, model.columnOf(M::Requests)), QStringLiteral("5"));
    QCOMPARE(cell(runs, 1, model.columnOf(M::FailedPct)), QStringLiteral("20.0%"));
    QCOMPARE(cell(runs, 0, model.columnOf(M::TtftP50)), QStringLiteral("0.200 s"));
    QCOMPARE(cell(runs, 1, model.columnOf(M::TtftP50)), QStringLiteral("0.350 s"));
    QTRY_COMPARE_WITH_TIMEOUT(runs.statusText(), QStringLiteral("2 completed · none running"), 5000);

    // Run 3 open while the user compares the finished ones against run 1.
    mark(session, RunMarkAction::Start, "k800", {{"K", "800"}});
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 3, 5000);
    QVERIFY(model.index(2, 0).data(M::RunningRole).toBool());
    QSortFilterProxyModel& proxy = runs.proxy();
    runs.compareAgainst(proxy.mapFromSource(model.index(0, 0)));
    QCOMPARE(model.baseline(), std::optional<std::uint32_t>(1));
    QCOMPARE(qRound(model.index(1, model.columnOf(M::Requests)).data(M::ChangeRole).toDouble() * 10), 667);
    QVERIFY(cell(runs, 1, model.columnOf(M::Requests), Qt::ToolTipRole).contains("+66.7%"));
    runs.compareAgainst(proxy.mapFromSource(model.index(2, 0)));  // the open run cannot be a baseline
    QVERIFY(!model.baseline());

    // Double-click's action: run 2's summary, and its span selected in the charts and timeline.
    QSignalSpy window_selected(&window.view(), &ViewState::windowSelected);
    QVERIFY(!runs.showSummary(proxy.mapFromSource(model.index(2, 0))));  // no summary while running
    QDialog* dialog = runs.showSummary(proxy.mapFromSource(model.index(1, 0)));
    QVERIFY(dialog);
    const QString summary = dialog->findChild<QPlainTextEdit*>()->toPlainText();
    QVERIFY2(summary.contains("Run 2 'k400' (K=400, policy=kv-aware)") && summary.contains("sweep.sh"),
             qPrintable(summary));
    QVERIFY2(summary.contains(QString::fromStdString(model.completedRun(1)->summary.toTable())), qPrintable(summary));
    QCOMPARE(window_selected.count(), 1);
    QCOMPARE(window_selected.first().at(0).value<SimTime>(), model.completedRun(1)->session_start);
    dialog->close();
    // The same from the table itself: a double-click on run 1's row.
    QTableView& table = runs.table();
    const QRect first = table.visualRect(proxy.mapFromSource(model.index(0, M::NameColumn)));
    QVERIFY2(table.isVisible() && first.isValid(),
             qPrintable(QStringLiteral("%1 %2").arg(table.isVisible()).arg(first.width())));
    QTest::mouseClick(table.viewport(), Qt::LeftButton, {}, first.center());  // a double-click follows a press
    QTest::mouseDClick(table.viewport(), Qt::LeftButton, {}, first.center());
    QDialog* clicked = nullptr;
    for (QDialog* d : window.findChildren<QDialog*>())
      if (d->isVisible() && d->windowTitle() == QStringLiteral("Run 1 'k200'")) clicked = d;
    QVERIFY(clicked);
    clicked->close();

    // The dock as the README shows it (KVSCOPE_RUNS_SCREENSHOT=FILE.png keeps it; docs/runs.png is made so).
    runs.compareAgainst(proxy.mapFromSource(model.index(0, 0)));
    QVERIFY(cell(runs, 1, model.columnOf(M::TtftP50), Qt::ToolTipRole).contains("+75.0% (worse)"));
    QTemporaryDir tmp;
    const QByteArray asked = qgetenv("KVSCOPE_RUNS_SCREENSHOT");
    const QString png = asked.isEmpty() ? tmp.filePath("runs.png") : QString::fromLocal8Bit(asked);
    QVERIFY(runs.dock().grab().save(png));
    QVERIFY(!QImage(png).isNull());

    // A new source: an empty list, hidden until that session's first marker.
    window.openSource(std::make_unique<LiveClusterSource>(fake.file()));
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.parameterCount(), 0);
    QVERIFY(!runs.dock().isVisible());
  }
};

QTEST_MAIN(RunsDockTest)
#include "test_runs_dock.moc"
