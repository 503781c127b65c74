// The sweep views over real sweep results: a tiny sweep of e3-load-floor (K in {0, 200}, 2 seeds,
// 120 simulated seconds, no recordings) is run once with core's SweepRunner, then the table model
// fills in run by run and the plot draws each series as a mean inside its 95% band.
#include <QAbstractItemModelTester>
#include <QAreaSeries>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>

#include "core/sweep/SweepRunner.h"
#include "widgets/sweep/SweepPlot.h"
#include "widgets/sweep/SweepTableModel.h"

using namespace kvscope;

class SweepViewsTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void modelFillsInRunByRun();
  void recordingRoleNamesTheMedianRun();
  void plotHasABandAroundTheMean();

 private:
  QTemporaryDir dir_;
  SweepOutcome outcome_;
};

void SweepViewsTest::initTestCase() {
  SweepSpec spec;
  spec.scenario = "e3-load-floor";
  spec.axes.push_back(SweepSpec::parseGrid("K=0,200"));
  spec.seeds = SweepSpec::parseSeeds("2");
  spec.duration_s = 120;
  spec.jobs = 2;
  spec.validate();
  SweepRunner runner(spec, dir_.path().toStdString(), nullptr);
  std::atomic<bool> cancel{false};
  outcome_ = runner.run(cancel);
  QCOMPARE(outcome_.ran, std::size_t(4));
  QCOMPARE(outcome_.failed, std::size_t(0));
}

void SweepViewsTest::modelFillsInRunByRun() {
  SweepTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  // The grid is known before any run finishes: rows, but empty cells.
  SweepData partial = outcome_.data;
  for (auto& point : partial.runs)
    for (auto& run : point) run.reset();
  model.setSweep(partial, dir_.path());
  QCOMPARE(model.rowCount(), 2);
  QCOMPARE(model.index(0, SweepTableModel::PointColumn).data().toString(), QStringLiteral("K=0 (baseline)"));
  QCOMPARE(model.index(1, SweepTableModel::PointColumn).data().toString(), QStringLiteral("K=200"));
  QCOMPARE(model.index(1, SweepTableModel::RunsColumn).data().toString(), QStringLiteral("0/2"));
  QVERIFY(model.index(1, SweepTableModel::FirstMetricColumn).data().toString().isEmpty());
  QVERIFY(model.index(1, SweepTableModel::FirstMetricColumn).data(SweepTableModel::RecordingRole).toString().isEmpty());

  // Runs arrive one at a time; the rows keep their place and the cells fill in.
  QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
  QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
  for (std::size_t p = 0; p < 2; ++p)
    for (std::size_t k = 0; k < 2; ++k) {
      partial.runs[p][k] = outcome_.data.runs[p][k];
      model.setSweep(partial, dir_.path());
    }
  QCOMPARE(reset.count(), 0);
  QCOMPARE(changed.count(), 4);
  QCOMPARE(model.index(1, SweepTableModel::RunsColumn).data().toString(), QStringLiteral("2/2"));

  // Every main metric reads "mean [low, high]" with the core's numbers (the log-scale interval).
  const SweepAnalysis analysis = SweepAnalysis::of(outcome_.data);
  const std::size_t e2e = analysis.metricIndex("e2e_mean_s");
  const MetricCell& cell = analysis.cells[1][e2e];
  QCOMPARE(cell.values.size(), std::size_t(2));
  const QString expected =
      QString::fromStdString(analysis.metrics[e2e].format(cell.interval.mean)) + QStringLiteral(" [") +
      QString::fromStdString(analysis.metrics[e2e].format(cell.interval.low())) + QStringLiteral(", ") +
      QString::fromStdString(analysis.metrics[e2e].format(cell.interval.high())) + QStringLiteral("]");
  QVERIFY(cell.interval.low() >= 0);
  QCOMPARE(model.index(1, SweepTableModel::FirstMetricColumn).data().toString(), expected);
  QVERIFY(model.headerData(SweepTableModel::FirstMetricColumn, Qt::Horizontal).toString().startsWith("E2E mean"));

  // Change vs baseline and verdict of the focus metric; 2 seeds are too few to claim anything.
  QCOMPARE(model.index(0, model.changeColumn()).data().toString(), QStringLiteral("baseline"));
  QVERIFY(cell.change_pct.has_value());
  QCOMPARE(model.index(1, model.changeColumn()).data().toString(),
           QStringLiteral("%1%2%").arg(*cell.change_pct >= 0 ? "+" : "").arg(*cell.change_pct, 0, 'f', 1));
  // Two pairs can never give p below 2/4 = 0.5: the verdict says what it needs, n and that floor.
  QCOMPARE(model.index(1, model.verdictColumn()).data().toString(),
           QStringLiteral("needs >= 6 seeds (n=2, min p 0.5)"));
  const QString tip = model.index(1, model.verdictColumn()).data(Qt::ToolTipRole).toString();
  QVERIFY2(tip.contains("n=2 pairs, sign-flip (exact, 4 patterns)") &&
               tip.contains("smallest possible 0.5 with 2 pairs") && tip.contains("needs >= 6 seeds at level 0.05"),
           qPrintable(tip));
  QCOMPARE(model.headerData(model.pValueColumn(), Qt::Horizontal).toString(), QStringLiteral("p (sign-flip)"));
  model.setFocusMetric("ttft_p90_s");
  QVERIFY(model.headerData(model.changeColumn(), Qt::Horizontal).toString().contains("TTFT p90"));
}

void SweepViewsTest::recordingRoleNamesTheMedianRun() {
  SweepTableModel model;
  model.setSweep(outcome_.data, dir_.path());
  const QStringList all = model.index(1, 0).data(SweepTableModel::RecordingsRole).toStringList();
  QCOMPARE(all.size(), 2);
  QCOMPARE(all[0], QDir(dir_.path()).filePath("K=200-seed1.kvrec"));
  QCOMPARE(all[1], QDir(dir_.path()).filePath("K=200-seed2.kvrec"));
  // For a metric cell, the lower median of two seeds is the seed with the smaller value.
  const auto& runs = outcome_.data.runs[1];
  const QString smaller = runs[0]->e2e_s.mean <= runs[1]->e2e_s.mean ? all[0] : all[1];
  QCOMPARE(model.index(1, SweepTableModel::FirstMetricColumn).data(SweepTableModel::RecordingRole).toString(), smaller);
  QCOMPARE(model.index(1, SweepTableModel::PointColumn).data(SweepTableModel::RecordingRole).toString(), all[0]);
}

void SweepViewsTest::plotHasABandAroundTheMean() {
  SweepPlot plot;
  plot.resize(800, 500);
  const SweepAnalysis analysis = SweepAnalysis::of(outcome_.data);
  plot.setSweep(outcome_.data, analysis);
  QCOMPARE(plot.axis(), std::string("K"));
  QCOMPARE(plot.metricKey(), std::string("e2e_mean_s"));
  QCOMPARE(plot.bands().size(), std::size_t(1));  // one axis: one series
  const SweepPlot::Band& band = plot.bands().front();
  QVERIFY(band.area && band.area->upperSeries() == band.upper && band.area->lowerSeries() == band.lower);
  QCOMPARE(band.mean->count(), 2);
  bool some_width = false;
  for (int i = 0; i < band.mean->count(); ++i) {
    const double x = band.mean->at(i).x(), mean = band.mean->at(i).y();
    QCOMPARE(band.lower->at(i).x(), x);
    QCOMPARE(band.upper->at(i).x(), x);
    QVERIFY(band.lower->at(i).y() <= mean);
    QVERIFY(mean <= band.upper->at(i).y());
    some_width = some_width || band.upper->at(i).y() > band.lower->at(i).y();
  }
  QCOMPARE(band.mean->at(0).x(), 0.0);
  QCOMPARE(band.mean->at(1).x(), 200.0);
  QVERIFY(some_width);  // two different seeds give an interval, not a line
  QCOMPARE(band.mean->at(1).y(), analysis.cells[1][analysis.metricIndex("e2e_mean_s")].interval.mean);

  // Another metric redraws; the choice survives an update of the data.
  QSignalSpy metric(&plot, &SweepPlot::metricChanged);
  plot.setMetric("ttft_p90_s");
  QCOMPARE(metric.count(), 1);
  plot.setSweep(outcome_.data, analysis);
  QCOMPARE(plot.metricKey(), std::string("ttft_p90_s"));
  QCOMPARE(plot.bands().size(), std::size_t(1));
}

QTEST_MAIN(SweepViewsTest)
#include "test_sweep_views.moc"
