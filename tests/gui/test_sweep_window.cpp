// The Sweep window end to end, offscreen: a bad grid is refused inline before anything starts; a
// tiny real sweep (e3-load-floor, K in {0, 200}, 2 seeds) runs in the background, fills the table
// and the plot, writes the runs and the summaries; a double-click replays the right run in the main
// window; Cancel stops a long sweep and the window returns to idle.
#include <QAction>
#include <QDateTime>
#include <QDir>
#include <QLabel>
#include <QLineSeries>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <QImage>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/gui/MainWindow.h"
#include "backend/recording/KvrecSweepRecorder.h"
#include "core/source/Source.h"
#include "core/sweep/SweepJob.h"
#include "widgets/common/RunSession.h"
#include "widgets/sweep/SweepForm.h"
#include "widgets/sweep/SweepPlot.h"
#include "widgets/sweep/SweepTableModel.h"
#include "widgets/sweep/SweepWindow.h"

using namespace kvscope;

namespace {
// What the app gives the sweep window and its job: each run recorded as a .kvrec.
SweepRecorderFactory kvrecRecorders() {
  return [](const std::string& path) { return std::make_unique<KvrecSweepRecorder>(path); };
}

void tinySweep(SweepForm& form, const QString& dir, const QString& duration) {
  form.setScenario(QStringLiteral("e3-load-floor"));
  form.setAxes({{QStringLiteral("K"), QStringLiteral("0,200")}});
  form.setSeeds(QStringLiteral("2"));
  form.setDuration(duration);
  form.setJobs(2);
  form.setOutputDir(dir);
}

QStringList filesIn(const QString& dir) {
  return QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}
}  // namespace

class SweepWindowTest : public QObject {
  Q_OBJECT
 private slots:
  void init() { QCoreApplication::setOrganizationName("KVScopeTest"); }
  void rejectsAnUnknownKnobInlineAndStartsNothing();
  void jobStagesEveryRunAsItsSummaryAppears();
  void runsFillTheTableAndADoubleClickReplaysTheRun();
  void cancelStopsARunningSweep();
  void screenshot();
};

void SweepWindowTest::rejectsAnUnknownKnobInlineAndStartsNothing() {
  QTemporaryDir tmp;
  const QString out = tmp.filePath("out");
  SweepWindow window(kvrecRecorders());
  window.show();
  tinySweep(window.form(), out, QStringLiteral("60"));
  window.form().setAxes({{QStringLiteral("Kx"), QStringLiteral("0,200")}});
  auto* run = window.findChild<QPushButton*>(QStringLiteral("run"));
  QVERIFY(run && run->isEnabled());
  run->click();
  QVERIFY(!window.running());
  auto* error = window.form().findChild<QLabel*>(QStringLiteral("formError"));
  QVERIFY(error && error->isVisible());
  QVERIFY2(error->text().startsWith("Grid axis Kx: unknown knob 'Kx'"), qPrintable(error->text()));
  QVERIFY(run->isEnabled());
  QCOMPARE(window.model().rowCount(), 0);
  QTest::qWait(300);  // were anything started, it would have written by now
  QVERIFY(!QDir(out).exists() || filesIn(out).isEmpty());

  // Other fields are named too; a fixed form starts.
  window.form().setAxes({{QStringLiteral("K"), QStringLiteral("0,200")}});
  window.form().setSeeds(QStringLiteral("x"));
  QVERIFY(!window.start());
  QVERIFY2(window.form().error().startsWith("Seeds:"), qPrintable(window.form().error()));
  window.form().setSeeds(QStringLiteral("2"));
  window.form().setBaseline(QStringLiteral("K=50"));
  QVERIFY(!window.start());
  QVERIFY2(window.form().error().startsWith("Baseline"), qPrintable(window.form().error()));
  QVERIFY(!QDir(out).exists() || filesIn(out).isEmpty());
}

// The runner reports counts only; the job reads each run's summary back as it appears. Every run
// must arrive exactly once, at its own (point, seed), with the summary the runner returns.
void SweepWindowTest::jobStagesEveryRunAsItsSummaryAppears() {
  QTemporaryDir tmp;
  SweepSpec spec;
  spec.axes.push_back(SweepSpec::parseGrid("K=0,200"));
  spec.seeds = SweepSpec::parseSeeds("2");
  spec.duration_s = 600;
  spec.jobs = 2;
  spec.validate();
  SweepJob job(spec, tmp.path().toStdString(), kvrecRecorders());
  std::vector<SweepJob::FinishedRun> runs;
  std::optional<SweepOutcome> outcome;
  std::optional<SweepProgress> last;
  for (int i = 0; i < 600 && !outcome; ++i) {
    SweepJob::Update u = job.drain();
    for (auto& r : u.runs) runs.push_back(std::move(r));
    if (u.progress) last = u.progress;
    if (u.done) {
      QVERIFY2(u.error.empty(), u.error.c_str());
      outcome = std::move(u.outcome);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  QVERIFY(outcome);
  QCOMPARE(outcome->ran, std::size_t(4));
  QVERIFY(last && last->finished == 4);
  QCOMPARE(runs.size(), std::size_t(4));
  for (const auto& r : runs) {
    const auto& expected = outcome->data.runs[r.point][r.seed_index];
    QVERIFY(expected);
    QCOMPARE(r.summary.seed, expected->seed);
    QCOMPARE(r.summary.toJson().dump(), expected->toJson().dump());
  }
  QVERIFY(QFile::exists(tmp.filePath("K=200-seed2.kvrec")));
}

void SweepWindowTest::runsFillTheTableAndADoubleClickReplaysTheRun() {
  QTemporaryDir tmp;
  const QString out = tmp.filePath("sweep");
  MainWindow main;
  main.resize(1200, 800);
  main.show();
  // Opened from File > New sweep..., as a user would.
  QAction* action = nullptr;
  for (QAction* a : main.menuBar()->actions().front()->menu()->actions())
    if (a->text().remove('&') == QStringLiteral("New sweep...")) action = a;
  QVERIFY(action);
  action->trigger();
  auto* window = main.findChild<SweepWindow*>();
  QVERIFY(window && window->isVisible());
  tinySweep(window->form(), out, QStringLiteral("600"));
  QVERIFY(window->start());
  QVERIFY(window->running());
  QCOMPARE(window->model().rowCount(), 2);  // the grid shows before any run is done
  QTRY_VERIFY_WITH_TIMEOUT(!window->running(), 120000);
  QVERIFY2(window->statusText().startsWith("Done: 4 runs (0 reused), 0 failed."), qPrintable(window->statusText()));
  QCOMPARE(window->progress().value(), 1000);
  for (const char* f : {"K=0-seed1.kvrec", "K=0-seed2.kvrec", "K=200-seed1.kvrec", "K=200-seed2.kvrec",
                        "K=200-seed2.json", "summary.md", "summary.csv", "summary.json"})
    QVERIFY2(QFile::exists(QDir(out).filePath(f)), f);

  SweepTableModel& model = window->model();
  QCOMPARE(model.index(0, SweepTableModel::RunsColumn).data().toString(), QStringLiteral("2/2"));
  QCOMPARE(model.index(1, SweepTableModel::RunsColumn).data().toString(), QStringLiteral("2/2"));
  QVERIFY(model.index(1, SweepTableModel::FirstMetricColumn).data().toString().contains(QStringLiteral(" [")));
  QCOMPARE(window->plot().bands().size(), std::size_t(1));
  QCOMPARE(window->plot().bands().front().mean->count(), 2);

  // Double-click the K=200 E2E-mean cell: the median run of that point (lower of two by E2E mean).
  const auto& runs = model.data().runs[1];
  QVERIFY(runs[0] && runs[1]);
  const QString expected =
      QDir(out).filePath(runs[0]->e2e_s.mean <= runs[1]->e2e_s.mean ? "K=200-seed1.kvrec" : "K=200-seed2.kvrec");
  QSignalSpy asked(window, &SweepWindow::openRecordingRequested);
  QTableView& table = window->table();
  const QModelIndex cell = model.index(1, SweepTableModel::FirstMetricColumn);
  table.scrollTo(cell);
  const QPoint at = table.visualRect(cell).center();
  QTest::mouseClick(table.viewport(), Qt::LeftButton, {}, at);
  QTest::mouseDClick(table.viewport(), Qt::LeftButton, {}, at);
  QTRY_COMPARE(asked.count(), 1);
  QCOMPARE(asked.first().at(0).toString(), expected);
  // The main window replays it.
  QTRY_VERIFY_WITH_TIMEOUT(main.session().source() != nullptr, 10000);
  QCOMPARE(QString::fromStdString(main.session().source()->description()),
           QStringLiteral("recording ") + QFileInfo(expected).fileName());

  // Run again with Resume: every run is already done, nothing runs, the same table.
  const QDateTime written = QFileInfo(expected).lastModified();
  window->form().setResume(true);
  QVERIFY(window->start());
  QTRY_VERIFY_WITH_TIMEOUT(!window->running(), 60000);
  QVERIFY2(window->statusText().startsWith("Done: 4 runs (4 reused), 0 failed."), qPrintable(window->statusText()));
  QCOMPARE(QFileInfo(expected).lastModified(), written);
  QCOMPARE(model.index(1, SweepTableModel::RunsColumn).data().toString(), QStringLiteral("2/2"));
}

void SweepWindowTest::cancelStopsARunningSweep() {
  QTemporaryDir tmp;
  const QString out = tmp.filePath("long");
  SweepWindow window(kvrecRecorders());
  window.show();
  // Runs of 64 D (about 4 s each here), far longer than the test waits, so only Cancel can end
  // them. e3-load-floor's runs of 2 simulated days took 0.2 s (its sessions end within the first
  // hour, and the rest is idle time the simulator skips): on a loaded machine two had landed
  // before the Cancel.
  tinySweep(window.form(), out, QStringLiteral("172800"));
  window.form().setScenario(QStringLiteral("many-workers"));
  window.form().setSeeds(QStringLiteral("4"));
  QVERIFY(window.start());
  auto* cancel = window.findChild<QPushButton*>(QStringLiteral("cancel"));
  auto* run = window.findChild<QPushButton*>(QStringLiteral("run"));
  QVERIFY(cancel->isEnabled() && !run->isEnabled());
  QTRY_VERIFY_WITH_TIMEOUT(window.progress().format().contains(QStringLiteral("running")), 30000);
  QTRY_VERIFY_WITH_TIMEOUT(window.progress().value() > 0, 30000);  // simulated time is passing
  const auto pressed = std::chrono::steady_clock::now();
  cancel->click();
  QVERIFY(!cancel->isEnabled());
  QTRY_VERIFY_WITH_TIMEOUT(!window.running(), 60000);
  QVERIFY(std::chrono::steady_clock::now() - pressed < std::chrono::seconds(30));
  QVERIFY2(window.statusText().startsWith("Cancelled: 0 of 8 runs done;"), qPrintable(window.statusText()));
  QVERIFY(run->isEnabled() && !cancel->isEnabled() && window.form().isEnabled());
  // Nothing half-written is left, and no summary of an unfinished sweep.
  QVERIFY2(filesIn(out).isEmpty(), qPrintable(filesIn(out).join(", ")));
}

// A larger sweep (two policies x four K, 3 seeds) runs to its end in the window and renders
// offscreen; KVSCOPE_SWEEP_SCREENSHOT=FILE.png keeps the picture (docs/sweep.png is made so).
void SweepWindowTest::screenshot() {
  QTemporaryDir tmp;
  const QByteArray asked = qgetenv("KVSCOPE_SWEEP_SCREENSHOT");
  const QString path = asked.isEmpty() ? tmp.filePath("sweep.png") : QString::fromLocal8Bit(asked);
  SweepWindow window(kvrecRecorders());
  window.resize(1500, 900);
  window.show();
  window.form().setAxes({{QStringLiteral("policy"), QStringLiteral("kv-aware,exclusive-overlap")},
                         {QStringLiteral("K"), QStringLiteral("0,50,100,200")}});
  window.form().setSeeds(QStringLiteral("3"));
  window.form().setDuration(QStringLiteral("1800"));
  window.form().setJobs(2);
  window.form().setOutputDir(tmp.filePath("sweep"));
  QVERIFY(window.start());
  QTRY_VERIFY_WITH_TIMEOUT(!window.running(), 600000);
  window.plot().setMetric("ttft_p90_s");
  window.table().selectionModel()->setCurrentIndex(window.model().index(3, SweepTableModel::FirstMetricColumn),
                                                   QItemSelectionModel::ClearAndSelect);
  QTest::qWait(200);
  QVERIFY(window.grab().save(path));
  QCOMPARE(QImage(path).size(), window.grab().size());
  QCOMPARE(window.model().rowCount(), 8);
}

QTEST_MAIN(SweepWindowTest)
#include "test_sweep_window.moc"
