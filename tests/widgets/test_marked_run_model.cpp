// The Runs table over synthetic marked runs: a column per parameter name any run gave (first-seen
// order, empty where a run lacks it), the open run as running with its progress, the change of each
// metric against a chosen baseline run (value, tooltip, better/worse tint from the palette), numeric
// sorting through a proxy, and a QAbstractItemModelTester watching every change.
#include <QAbstractItemModelTester>
#include <QBrush>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "widgets/runs/MarkedRunTableModel.h"

using namespace kvscope;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;
using M = MarkedRunTableModel;

RunMarked startOf(std::uint32_t index, std::string name, Params params) {
  return RunMarked{RunMarkAction::Start, index, std::move(name), std::move(params), "sweep.sh", {}};
}

MarkedRun runOf(std::uint32_t index, std::string name, Params params, long total, long failed, double ttft_p99,
                long evictions) {
  MarkedRun run;
  run.start = startOf(index, name, std::move(params));
  run.ended_by = "sweep.sh";
  run.session_start = secondsToTime(60.0 * index);
  run.session_end = run.session_start + secondsToTime(42);
  run.summary.scenario = name;
  run.summary.total = total;
  run.summary.failed = failed;
  run.summary.completed = total - failed;
  run.summary.failure_rate = total ? static_cast<double>(failed) / static_cast<double>(total) : 0;
  run.summary.ttft_s =
      SampleSummary{ttft_p99 / 2, ttft_p99 / 2, ttft_p99 * 0.9, ttft_p99, static_cast<std::size_t>(total - failed)};
  run.summary.e2e_s = SampleSummary{2, 2, 3, 4, static_cast<std::size_t>(total - failed)};
  run.summary.eviction_count = evictions;
  return run;
}

QVariant at(const M& model, int row, int column, int role = Qt::DisplayRole) {
  return model.index(row, column).data(role);
}

}  // namespace

class MarkedRunModelTest : public QObject {
  Q_OBJECT
 private slots:
  void parameterColumnsAreTheUnionInFirstSeenOrder() {
    M model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.addRun(runOf(1, "k200", {{"K", "200"}}, 100, 0, 1.0, 0));
    model.addRun(runOf(2, "k400-linear", {{"K", "400"}, {"policy", "linear"}}, 100, 0, 1.0, 0));
    model.openRun(startOf(3, "lin", {{"policy", "linear"}, {"seed", "7"}}));
    QCOMPARE(model.parameterCount(), 3);
    QCOMPARE(model.columnCount(), M::FirstParameterColumn + 3 + M::MetricCount);
    QCOMPARE(model.parameterColumn("K"), 2);
    QCOMPARE(model.parameterColumn("policy"), 3);
    QCOMPARE(model.parameterColumn("seed"), 4);
    QCOMPARE(model.headerData(3, Qt::Horizontal).toString(), QStringLiteral("policy"));
    QCOMPARE(model.headerData(model.columnOf(M::TtftP99), Qt::Horizontal).toString(), QStringLiteral("TTFT p99"));
    QCOMPARE(at(model, 0, 2).toString(), QStringLiteral("200"));
    QVERIFY(at(model, 0, 3).toString().isEmpty());  // run 1 gave no policy
    QCOMPARE(at(model, 1, 3).toString(), QStringLiteral("linear"));
    QVERIFY(at(model, 2, 2).toString().isEmpty());
    QCOMPARE(at(model, 2, 4).toString(), QStringLiteral("7"));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(M::FirstParameterColumn) + int(M::MetricCount));
  }

  void openRunShowsProgressThenItsSummary() {
    M model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.openRun(startOf(1, "k200", {{"K", "200"}}));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.completedCount(), 0);
    QVERIFY(model.openStart() && model.openStart()->name == "k200");
    QVERIFY(at(model, 0, 0, M::RunningRole).toBool());
    QVERIFY(at(model, 0, M::NameColumn, Qt::FontRole).value<QFont>().italic());
    QVERIFY(!model.completedRun(0));
    model.setProgress({4.2, 10, 1});
    QCOMPARE(at(model, 0, model.columnOf(M::Duration)).toString(), QStringLiteral("running, 4.2 s"));
    QCOMPARE(at(model, 0, model.columnOf(M::Requests)).toString(), QStringLiteral("10"));
    QCOMPARE(at(model, 0, model.columnOf(M::FailedPct)).toString(), QStringLiteral("10.0%"));
    QVERIFY(at(model, 0, model.columnOf(M::TtftP99)).toString().isEmpty());  // comes with the summary

    model.addRun(runOf(1, "k200", {{"K", "200"}}, 120, 3, 1.5, 4));
    QCOMPARE(model.rowCount(), 1);  // the same row, now completed
    QCOMPARE(model.completedCount(), 1);
    QVERIFY(!model.openStart());
    QVERIFY(!at(model, 0, 0, M::RunningRole).toBool());
    QCOMPARE(at(model, 0, model.columnOf(M::Duration)).toString(), QStringLiteral("42 s"));
    QCOMPARE(at(model, 0, model.columnOf(M::Requests)).toString(), QStringLiteral("120"));
    QCOMPARE(at(model, 0, model.columnOf(M::FailedPct)).toString(), QStringLiteral("2.5%"));
    QCOMPARE(at(model, 0, model.columnOf(M::TtftP99)).toString(), QStringLiteral("1.500 s"));
    QCOMPARE(at(model, 0, model.columnOf(M::Evictions)).toString(), QStringLiteral("4"));
    // A run seen again (a replay sought back over it) replaces its row.
    model.addRun(runOf(1, "k200", {{"K", "200"}}, 130, 3, 1.5, 4));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(at(model, 0, model.columnOf(M::Requests)).toString(), QStringLiteral("130"));
  }

  void diagnosisListsEachModeOnce() {
    M model;
    MarkedRun run = runOf(1, "k0", {}, 10, 0, 1, 0);
    auto finding = [](const char* mode, const char* name, double from, double to, const char* evidence = "") {
      Finding f;
      f.mode = mode;
      f.name = name;
      f.window_start_s = from;
      f.window_end_s = to;
      f.evidence = evidence;
      return f;
    };
    run.summary.diagnosis = {finding("C", "load-floor starvation", 0, 10, "D1 idle"),
                             finding("A", "eviction storm", 3, 9), finding("C", "load-floor starvation", 20, 30)};
    model.addRun(run);
    QCOMPARE(at(model, 0, model.columnOf(M::Diagnosis)).toString(), QStringLiteral("C, A"));
    QVERIFY(at(model, 0, model.columnOf(M::Diagnosis), Qt::ToolTipRole).toString().contains("D1 idle"));
  }

  void changesAgainstTheBaseline() {
    M model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.addRun(runOf(1, "k200", {{"K", "200"}}, 100, 2, 1.0, 0));
    model.addRun(runOf(2, "k400", {{"K", "400"}}, 150, 1, 1.123, 3));
    model.openRun(startOf(3, "k800", {{"K", "800"}}));
    const int ttft = model.columnOf(M::TtftP99);
    QVERIFY(!at(model, 1, ttft, M::ChangeRole).isValid());  // no baseline yet
    QVERIFY(!at(model, 1, ttft, Qt::BackgroundRole).isValid());

    model.setBaseline(1);
    QCOMPARE(model.baseline(), std::optional<std::uint32_t>(1));
    QCOMPARE(at(model, 0, M::NameColumn).toString(), QStringLiteral("k200 (baseline)"));
    QVERIFY(at(model, 0, M::NameColumn, Qt::FontRole).value<QFont>().bold());
    QVERIFY(!at(model, 0, ttft, M::ChangeRole).isValid());  // the baseline against itself: nothing
    QCOMPARE(qRound(at(model, 1, ttft, M::ChangeRole).toDouble() * 10), 123);
    const QString tip = at(model, 1, ttft, Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains("+12.3%") && tip.contains("(worse)") && tip.contains("1 'k200'"), qPrintable(tip));
    // Fewer failures is better: 1 in 150 (0.67%) against 2 in 100 (2%) is -66.7%.
    QCOMPARE(qRound(at(model, 1, model.columnOf(M::FailedPct), M::ChangeRole).toDouble() * 10), -667);
    QVERIFY(at(model, 1, model.columnOf(M::FailedPct), Qt::ToolTipRole).toString().contains("(better)"));
    // More requests is neither: the change is told, the cell not tinted.
    QCOMPARE(qRound(at(model, 1, model.columnOf(M::Requests), M::ChangeRole).toDouble()), 50);
    QVERIFY(!at(model, 1, model.columnOf(M::Requests), Qt::BackgroundRole).isValid());
    // No percentage of nothing: 3 evictions against none.
    QVERIFY(!at(model, 1, model.columnOf(M::Evictions), M::ChangeRole).isValid());
    const QString evictions = at(model, 1, model.columnOf(M::Evictions), Qt::ToolTipRole).toString();
    QVERIFY2(evictions.endsWith("Baseline run 1 'k200': 0 (worse)"), qPrintable(evictions));  // still worse, and tinted
    QVERIFY(at(model, 1, model.columnOf(M::Evictions), Qt::BackgroundRole).isValid());
    // The open run has nothing to compare yet.
    QVERIFY(!at(model, 2, ttft, M::ChangeRole).isValid());

    // The tints are mixed into the palette's Base when asked: a dark palette gives dark tints.
    const QPalette light = QGuiApplication::palette();
    const QColor worse_light = at(model, 1, ttft, Qt::BackgroundRole).value<QBrush>().color();
    const QColor better_light = at(model, 1, model.columnOf(M::FailedPct), Qt::BackgroundRole).value<QBrush>().color();
    QVERIFY(worse_light.red() > worse_light.green());
    QVERIFY(better_light.green() > better_light.red());
    QPalette dark = light;
    dark.setColor(QPalette::Base, QColor(0x20, 0x20, 0x20));
    QGuiApplication::setPalette(dark);
    const QColor worse_dark = at(model, 1, ttft, Qt::BackgroundRole).value<QBrush>().color();
    QGuiApplication::setPalette(light);
    QVERIFY(worse_dark.lightness() < worse_light.lightness());
    QVERIFY(worse_dark.red() > worse_dark.green());

    model.setBaseline(std::nullopt);
    QVERIFY(!at(model, 1, ttft, M::ChangeRole).isValid());
    QCOMPARE(at(model, 0, M::NameColumn).toString(), QStringLiteral("k200"));
  }

  void sortsNumbersAsNumbers() {
    M model;
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(M::SortRole);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.addRun(runOf(1, "a", {{"K", "1000"}}, 30, 0, 2.0, 0));
    model.addRun(runOf(2, "b", {{"K", "50"}}, 200, 0, 0.5, 0));
    model.addRun(runOf(3, "c", {{"K", "200"}}, 9, 0, 1.0, 0));
    proxy.sort(model.parameterColumn("K"), Qt::AscendingOrder);
    QCOMPARE(proxy.index(0, M::NameColumn).data().toString(), QStringLiteral("b"));
    QCOMPARE(proxy.index(2, M::NameColumn).data().toString(), QStringLiteral("a"));
    proxy.sort(model.columnOf(M::Requests), Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, M::NameColumn).data().toString(), QStringLiteral("b"));
    QCOMPARE(proxy.index(2, M::NameColumn).data().toString(), QStringLiteral("c"));
    // Rows arriving while sorted land in place.
    model.addRun(runOf(4, "d", {{"K", "100"}}, 500, 0, 1.0, 0));
    QCOMPARE(proxy.index(0, M::NameColumn).data().toString(), QStringLiteral("d"));
    QCOMPARE(proxy.index(0, M::IndexColumn).data(M::RunIndexRole).toUInt(), 4u);
  }
};

QTEST_MAIN(MarkedRunModelTest)
#include "test_marked_run_model.moc"
