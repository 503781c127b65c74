// Two runs side by side in the real console, offscreen: a recording replayed as A and a second one
// (another policy on the same scenario) compared with it. B's lines are B's own data on A's time
// axis (shifted by the offset), the difference chart is A minus B, the Compare runs panel holds
// what `kvscope-cli report` says of each file, and the command line refuses what it cannot do.
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QProcess>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "app/gui/CompareActions.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PanelDocks.h"
#include "app/gui/SourceFactory.h"
#include "app/gui/TwinRunActions.h"
#include "backend/recording/RecordingWorkload.h"
#include "core/telemetry/ComparedRun.h"
#include "tests/support/BuildTree.h"
#include "tests/support/CliRunner.h"
#include "tests/support/ConsoleWindow.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/LatencyPanel.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"
#include "widgets/runs/CounterfactualDialog.h"
#include "widgets/runs/RunComparePanel.h"

using namespace kvscope;

namespace {
int seriesNamed(const TimeSeriesChart& chart, const QString& name) {
  for (int i = 0; i < chart.seriesCount(); ++i)
    if (chart.seriesName(i) == name) return i;
  return -1;
}

int presentColumns(const std::vector<EnvelopeColumn>& columns) {
  return static_cast<int>(
      std::count_if(columns.begin(), columns.end(), [](const EnvelopeColumn& c) { return c.present; }));
}

// What B's series must draw on `chart`: B's gauge over the chart's columns moved back by `offset`,
// held to B's end, times `scale`; computed here from the store, not by the chart.
std::vector<EnvelopeColumn> expectedB(const TimeSeriesChart& chart, const TelemetryStore& b, const std::string& worker,
                                      SimTime offset) {
  for (const WorkerSeries& w : b.workers()) {
    if (w.info.name != worker) continue;
    ColumnGrid g = chart.grid();
    g.from -= offset;
    g.to -= offset;
    EnvelopeOptions options;
    options.hold_until = b.now();
    std::vector<EnvelopeColumn> columns = w.gauge(WorkerGauge::KvFraction).envelope(g, options);
    for (EnvelopeColumn& c : columns) {
      c.lo *= 100;
      c.hi *= 100;
    }
    return columns;
  }
  return {};
}

bool sameColumns(const std::vector<EnvelopeColumn>& a, const std::vector<EnvelopeColumn>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].present != b[i].present || (a[i].present && (a[i].lo != b[i].lo || a[i].hi != b[i].hi))) return false;
  return true;
}

QJsonObject report(const QString& recording) {
  const auto result = test::runCli({"report", recording, "--format", "json"});
  return QJsonDocument::fromJson(result.out).object();
}

// The window replaying `recording` as fast as it goes: the whole run is in the store soon.
void openWhole(MainWindow& window, const QString& recording) { test::openRecording(window, recording, 0); }

QString cellText(const QTableWidget& table, const QString& row, int column) {
  for (int r = 0; r < table.rowCount(); ++r)
    if (table.verticalHeaderItem(r) && table.verticalHeaderItem(r)->text() == row)
      return table.item(r, column) ? table.item(r, column)->text() : QString();
  return QStringLiteral("<no row %1>").arg(row);
}
}  // namespace

class CompareRunsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void bIsDrawnFromItsOwnDataBesideA();
  void theCommandLineComparesTwoRecordings();
  void theTwinIsDrawnBesideTheRun();
  void theCounterfactualDialogSaysWhatItCannotUse();

 private:
  QTemporaryDir dir_;
  QString a_, b_;
};

void CompareRunsTest::initTestCase() {
  RecordingWorkload::registerTraceFormat();  // as kvscope's main does
  a_ = dir_.filePath("kv-aware.kvrec");
  b_ = dir_.filePath("leastwork.kvrec");
  for (const auto& [file, policy] : {std::pair{a_, "kv-aware"}, std::pair{b_, "leastwork"}}) {
    const auto result = test::runCli(
        {"simulate", "--scenario", "e3-load-floor", "--duration", "300", "--policy", policy, "--record", file});
    QVERIFY2(result.code == 0, result.err.constData());
  }
}

void CompareRunsTest::bIsDrawnFromItsOwnDataBesideA() {
  MainWindow window;
  openWhole(window, a_);
  const TelemetryStore& store = window.session().store();
  QTRY_VERIFY_WITH_TIMEOUT(store.finished(), 60000);

  // Nothing recorded to compare with is an error that names the file.
  QString error;
  QVERIFY(!window.compare().compareNow(dir_.filePath("missing.kvrec").toStdString(), &error));
  QVERIFY2(error.contains("missing.kvrec"), qPrintable(error));
  QVERIFY(!window.view().comparison());

  QVERIFY2(window.compare().compareNow(b_.toStdString(), &error), qPrintable(error));
  const ComparedRun* run = window.view().comparison();
  QVERIFY(run);
  QCOMPARE(run->name_b, std::string("leastwork.kvrec"));
  window.view().setRange(0, secondsToTime(300));

  // B's D1 on the KV chart: B's own samples on A's time axis, dashed, owned by A's D1.
  KvPoolPanel& pools = window.docks().kvPools();
  TimeSeriesChart& kv = pools.occupancyChart();
  QTRY_VERIFY_WITH_TIMEOUT(seriesNamed(kv, "D1 B") >= 0, 10000);
  const int a1 = seriesNamed(kv, "D1"), b1 = seriesNamed(kv, "D1 B");
  QTRY_VERIFY_WITH_TIMEOUT(sameColumns(kv.drawnColumns(b1), expectedB(kv, run->store_b, "D1", 0)), 10000);
  QVERIFY(presentColumns(kv.drawnColumns(b1)) > kv.plotColumns() / 2);
  QVERIFY(!sameColumns(kv.drawnColumns(a1), kv.drawnColumns(b1)));  // two policies, two runs
  kv.grab();                                                        // lays the legend out
  QVERIFY2(kv.legend().shownTexts().join('|').contains("A: kv-aware.kvrec"),
           qPrintable(kv.legend().shownTexts().join('|')));
  QVERIFY(kv.legend().shownTexts().join('|').contains("B: leastwork.kvrec"));

  // The difference chart: per column where both have a value, A's mid value minus B's.
  TimeSeriesChart* diff = pools.differenceChart(0);
  QVERIFY(diff);
  QTRY_VERIFY_WITH_TIMEOUT(diff->isVisible() && presentColumns(diff->drawnColumns(1)) > 0, 10000);
  const auto& da = kv.drawnColumns(a1);
  const auto& db = kv.drawnColumns(b1);
  const auto& dd = diff->drawnColumns(1);
  int checked = 0;
  for (std::size_t c = 0; c < dd.size(); ++c) {
    QCOMPARE(dd[c].present, da[c].present && db[c].present);
    if (!dd[c].present) continue;
    QCOMPARE(dd[c].lo, (da[c].lo + da[c].hi) / 2 - (db[c].lo + db[c].hi) / 2);
    ++checked;
  }
  QVERIFY(checked > 0);
  QVERIFY(diff->yMin() < 0);  // signed

  // An offset moves B, not A: B's columns are its data 60 s later.
  const auto a_before = kv.drawnColumns(a1);
  window.compare().setOffsetSeconds(60);
  QTRY_VERIFY_WITH_TIMEOUT(sameColumns(kv.drawnColumns(b1), expectedB(kv, run->store_b, "D1", secondsToTime(60))),
                           10000);
  QVERIFY(sameColumns(kv.drawnColumns(a1), a_before));
  QVERIFY(!kv.drawnColumns(b1).front().present);  // B had not started yet

  // Latency: B's finished requests as points beside A's.
  LatencyPanel& latency = window.docks().latency();
  auto* latency_chart = latency.findChild<TimeSeriesChart*>();
  QVERIFY(latency_chart);
  QTRY_VERIFY_WITH_TIMEOUT(presentColumns(latency_chart->drawnColumns(seriesNamed(*latency_chart, "TTFT B"))) > 0,
                           10000);

  // The panel: what `kvscope-cli report` says of each file, and the change.
  auto* panel = window.findChild<RunComparePanel*>();
  QVERIFY(panel);
  QVERIFY(panel->heading().contains("kv-aware.kvrec") && panel->heading().contains("leastwork.kvrec"));
  QVERIFY(panel->heading().contains("60.0 s later"));
  const QJsonObject ra = report(a_), rb = report(b_);
  const double p90a = ra["ttft_s"].toObject()["p90"].toDouble(), p90b = rb["ttft_s"].toObject()["p90"].toDouble();
  QCOMPARE(cellText(panel->summaryTable(), "TTFT p90 (s)", 0), QString::number(p90a, 'f', 3));
  QCOMPARE(cellText(panel->summaryTable(), "TTFT p90 (s)", 1), QString::number(p90b, 'f', 3));
  QVERIFY(cellText(panel->summaryTable(), "TTFT p90 (s)", 2).startsWith(p90b > p90a ? "+" : "-"));
  QCOMPARE(panel->workerTable().rowCount(), 3);
  for (int w = 0; w < 3; ++w) {
    const QString id = QStringLiteral("D%1").arg(w);
    QCOMPARE(cellText(panel->workerTable(), id, 0),
             QString::number(ra["workers"].toArray()[w].toObject()["share"].toDouble() * 100, 'f', 1));
    QCOMPARE(cellText(panel->workerTable(), id, 1),
             QString::number(rb["workers"].toArray()[w].toObject()["share"].toDouble() * 100, 'f', 1));
  }

  // Stopped: B's series and the difference chart go; another run opened stops it too.
  window.compare().stopComparing();
  QTRY_VERIFY_WITH_TIMEOUT(seriesNamed(kv, "D1 B") < 0, 10000);
  QVERIFY(!diff->isVisible());
  QVERIFY(window.compare().compareNow(b_.toStdString(), &error));
  openWhole(window, b_);
  QVERIFY(!window.view().comparison());
}

void CompareRunsTest::theCommandLineComparesTwoRecordings() {
  const QString png = dir_.filePath("compare.png");
  QProcess gui;
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  gui.setProcessEnvironment(env);
  gui.start(KVSCOPE_GUI, {"--compare", a_, b_, "--compare-offset", "5", "--screenshot", png, "--run-for", "300",
                          "--size", "1280x800"});
  QVERIFY(gui.waitForFinished(120000));
  QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
  QCOMPARE(QImage(png).size(), QSize(1280, 800));
  // What it cannot do is a usage error that says so.
  const std::pair<QStringList, QString> refused[] = {
      {{"--compare", a_}, "name two recordings"},
      {{"--compare-offset", "5", a_}, "--compare-offset goes with --compare"},
      {{"--compare", a_, b_, "--compare-offset", "soon"}, "--compare-offset: expected seconds"},
  };
  for (const auto& [args, message] : refused) {
    gui.start(KVSCOPE_GUI, args);
    QVERIFY(gui.waitForFinished(60000));
    QCOMPARE(gui.exitCode(), 2);
    const QByteArray err = gui.readAllStandardError();
    QVERIFY2(err.contains(message.toUtf8()), err.constData());
  }
  // A B that is no recording: the console says which file and exits 1.
  gui.start(KVSCOPE_GUI, {"--compare", a_, dir_.filePath("nope.kvrec")});
  QVERIFY(gui.waitForFinished(60000));
  QCOMPARE(gui.exitCode(), 1);
  QVERIFY(gui.readAllStandardError().contains("nope.kvrec"));
}

// Twin vs this run on a twin's own recording: the replay reproduces it, so every number of B equals
// A's. Replay this run under leastwork: B is what `kvscope-cli simulate --trace` gives for the same
// change, and the baseline (the replay as recorded) is A again.
void CompareRunsTest::theTwinIsDrawnBesideTheRun() {
  MainWindow window;
  openWhole(window, a_);
  QSignalSpy compared(&window.compare(), &CompareActions::compared);
  QSignalSpy failed(&window.twin(), &TwinRunActions::failed);
  window.twin().start(std::nullopt);
  QTRY_VERIFY_WITH_TIMEOUT(compared.count() == 1 || !failed.isEmpty(), 120000);
  QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
  const ComparedRun* run = window.view().comparison();
  QVERIFY(run && !run->summary_base);
  QVERIFY2(run->b_label.find("twin's replay") != std::string::npos, run->b_label.c_str());
  for (const SideBySideRow& row : run->side_by_side.summary)
    QVERIFY2(row.a == row.b, row.label.c_str());  // the twin reproduces its own run exactly

  TwinReplaySpec leastwork;
  leastwork.policy = "leastwork";
  window.twin().start(leastwork);
  QTRY_VERIFY_WITH_TIMEOUT(compared.count() == 2 || !failed.isEmpty(), 120000);
  QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.front().front().toString()));
  run = window.view().comparison();
  QVERIFY(run && run->summary_base);
  QCOMPARE(run->summary_b.policy, std::string("leastwork"));
  const auto cli =
      test::runCli({"simulate", "--trace", a_, "--policy", "leastwork", "--duration", "300", "--format", "json"});
  QVERIFY2(cli.code == 0, cli.err.constData());
  const QJsonObject expected = QJsonDocument::fromJson(cli.out).object();
  QCOMPARE(run->summary_b.ttft_s.p90, expected["ttft_s"].toObject()["p90"].toDouble());
  QCOMPARE(run->summary_b.completed, static_cast<long>(expected["requests"].toObject()["completed"].toDouble()));
  for (const SideBySideRow& row : run->side_by_side.summary) QVERIFY2(row.base == row.a, row.label.c_str());
  auto* panel = window.findChild<RunComparePanel*>();
  QVERIFY(panel);
  QCOMPARE(panel->summaryTable().columnCount(), 5);
  QVERIFY(panel->heading().contains("the twin under leastwork"));
}

void CompareRunsTest::theCounterfactualDialogSaysWhatItCannotUse() {
  CounterfactualDialog dialog("run.kvrec", "e3-load-floor", "kv-aware");
  QCOMPARE(dialog.policy().currentText(), QString("kv-aware"));
  QString error;
  dialog.knobs().setText("K=200, sticky_bonus=50");
  dialog.seed().setText("7");
  const auto ok = dialog.counterfactual(&error);
  QVERIFY2(ok, qPrintable(error));
  QCOMPARE(ok->knobs.at("K"), 200.0);
  QCOMPARE(ok->knobs.at("sticky_bonus"), 50.0);
  QCOMPARE(*ok->seed, std::uint64_t(7));
  const std::pair<QString, QString> bad[] = {{"K=abc", "expected a number"}, {"nope=1", "no knob 'nope'"}};
  for (const auto& [knobs, message] : bad) {
    dialog.knobs().setText(knobs);
    QVERIFY(!dialog.counterfactual(&error));
    QVERIFY2(error.contains(message), qPrintable(error));
  }
  dialog.knobs().clear();
  dialog.seed().setText("-1");
  QVERIFY(!dialog.counterfactual(&error));
  QVERIFY2(error.contains("Seed"), qPrintable(error));
}

QTEST_MAIN(CompareRunsTest)
#include "test_compare_runs.moc"
