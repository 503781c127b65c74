// SweepRunner without the CLI: every (point, seed) runs once on the thread pool, each run's summary
// is what runSimulation gives for the same options, the files appear only complete, resume reads
// them back instead of running, and cancelling stops running runs and keeps nothing half-written.
#include <QtTest>

#include <QDir>
#include <QTemporaryDir>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "core/sweep/SweepRunner.h"

using namespace kvscope;

namespace {

SweepSpec smallSpec() {
  SweepSpec s;
  s.scenario = "e3-load-floor";
  s.axes = {SweepSpec::parseGrid("K=0,200")};
  s.seeds = {1, 2, 3};
  s.duration_s = 600;
  s.jobs = 2;
  return s;
}

// Counts the events a run records, and writes a small file so the runner has something to rename.
class CountingRecorder : public SweepRecorder, public EventSink {
 public:
  CountingRecorder(std::string path, std::atomic<int>& events) : path_(std::move(path)), events_(events) {}
  EventSink& sink() override { return *this; }
  void onEvent(const Event&) override { ++events_; }
  bool close(std::string*) override {
    std::ofstream(path_) << "recorded";
    return true;
  }

 private:
  std::string path_;
  std::atomic<int>& events_;
};

nlohmann::json withoutWallTime(nlohmann::json j) {
  j.erase("wall_seconds");
  return j;
}

}  // namespace

class TestSweepRunner : public QObject {
  Q_OBJECT
 private slots:
  void runsEveryPointAndSeedOnce() {
    QTemporaryDir dir;
    std::atomic<int> events{0};
    std::vector<std::string> paths;
    std::mutex m;
    std::condition_variable second_started;
    bool waited_out = false;
    SweepRunner runner(smallSpec(), dir.path().toStdString(), [&](const std::string& path) {
      std::unique_lock lock(m);
      paths.push_back(path);
      second_started.notify_all();
      // The first run waits for the second to start: with two jobs they run at once, one after the
      // other they could not (and the wait would time out).
      if (paths.size() == 1 &&
          !second_started.wait_for(lock, std::chrono::seconds(20), [&] { return paths.size() >= 2; }))
        waited_out = true;
      return std::make_unique<CountingRecorder>(path, events);
    });
    std::size_t max_running = 0;
    runner.setProgress([&](const SweepProgress& p) { max_running = std::max(max_running, p.running); });
    std::atomic<bool> cancel{false};
    const SweepOutcome out = runner.run(cancel);
    QCOMPARE(out.ran, std::size_t(6));
    QCOMPARE(out.reused, std::size_t(0));
    QVERIFY(!out.cancelled);
    QVERIFY(out.errors.empty());
    QVERIFY(!waited_out);
    QCOMPARE(max_running, std::size_t(2));  // two jobs at once, never more
    QVERIFY(events.load() > 1000);
    // Recordings are written under a hidden temporary name, then renamed.
    QCOMPARE(paths.size(), std::size_t(6));
    for (const auto& p : paths) QVERIFY2(QString::fromStdString(p).endsWith(".kvrec.partial"), p.c_str());
    QVERIFY(QFileInfo::exists(dir.filePath("K=200-seed3.kvrec")));
    QCOMPARE(QDir(dir.path()).entryList({"*.partial"}, QDir::Files | QDir::Hidden).size(), 0);

    // Each run is the run `simulate` would make: same scenario, knobs, policy, seed and duration.
    const SweepSpec spec = smallSpec();
    const auto points = spec.points();
    for (std::size_t p = 0; p < 2; ++p)
      for (std::size_t k = 0; k < 3; ++k) {
        const RunSummary direct =
            runSimulation(Scenario::load("e3-load-floor"), spec.optionsFor(points[p], spec.seeds[k]));
        QVERIFY(out.data.runs[p][k].has_value());
        QCOMPARE(QString::fromStdString(withoutWallTime(out.data.runs[p][k]->toJson()).dump()),
                 QString::fromStdString(withoutWallTime(direct.toJson()).dump()));
      }
    QCOMPARE(out.data.recordings[1][2], std::string("K=200-seed3.kvrec"));

    // Resume: everything is read back, nothing runs, the same summaries.
    std::atomic<int> events_again{0};
    SweepRunner again(smallSpec(), dir.path().toStdString(),
                      [&](const std::string& path) { return std::make_unique<CountingRecorder>(path, events_again); });
    again.setResume(true);
    const SweepOutcome resumed = again.run(cancel);
    QCOMPARE(resumed.ran, std::size_t(0));
    QCOMPARE(resumed.reused, std::size_t(6));
    QCOMPARE(events_again.load(), 0);
    QCOMPARE(resumed.data.runs[1][2]->toJson().dump(), out.data.runs[1][2]->toJson().dump());

    // A summary of a different run under that name (the spec changed) is not reused.
    SweepSpec longer = smallSpec();
    longer.duration_s = 900;
    SweepRunner changed(longer, dir.path().toStdString(), nullptr);
    changed.setResume(true);
    QCOMPARE(changed.run(cancel).reused, std::size_t(0));
  }

  void cancelStopsAndKeepsNothingHalfWritten() {
    QTemporaryDir dir;
    SweepSpec spec = smallSpec();
    spec.duration_s = 3600;
    std::atomic<bool> cancel{false};
    std::atomic<int> events{0};
    SweepRunner runner(spec, dir.path().toStdString(),
                       [&](const std::string& path) { return std::make_unique<CountingRecorder>(path, events); });
    // Cancel as soon as one run has finished: the other running run stops mid-way.
    runner.setProgress([&](const SweepProgress& p) {
      if (p.finished >= 1) cancel = true;
    });
    const SweepOutcome out = runner.run(cancel);
    QVERIFY(out.cancelled);
    QVERIFY(out.ran >= 1 && out.ran < 6);
    QVERIFY(out.errors.empty());
    const QDir d(dir.path());
    QCOMPARE(d.entryList({"*.partial"}, QDir::Files | QDir::Hidden).size(), 0);
    QCOMPARE(d.entryList({"*-seed*.json"}, QDir::Files).size(), static_cast<int>(out.ran));
    QCOMPARE(d.entryList({"*.kvrec"}, QDir::Files).size(), static_cast<int>(out.ran));

    // Cancelled before it starts: nothing runs.
    QTemporaryDir empty;
    std::atomic<bool> already{true};
    SweepRunner none(spec, empty.path().toStdString(), nullptr);
    const SweepOutcome nothing = none.run(already);
    QCOMPARE(nothing.ran, std::size_t(0));
    QVERIFY(nothing.cancelled);
    QCOMPARE(QDir(empty.path()).entryList(QDir::Files | QDir::Hidden).size(), 0);
  }

  // A Slurm task runs its share only; the others' runs are read back when done, else left missing.
  void onlyRunsItsShare() {
    QTemporaryDir dir;
    SweepRunner first(smallSpec(), dir.path().toStdString(), nullptr);
    first.setOnly({0, 4});
    std::atomic<bool> cancel{false};
    const SweepOutcome a = first.run(cancel);
    QCOMPARE(a.ran, std::size_t(2));
    QCOMPARE(a.reused, std::size_t(0));
    QVERIFY(a.data.runs[0][0] && a.data.runs[1][1]);  // run 4 = point 1, seed index 1
    QVERIFY(!a.data.runs[0][1] && !a.data.runs[1][0]);
    const auto stems = first.runStems();
    QCOMPARE(stems.size(), std::size_t(6));
    QCOMPARE(stems[4], std::string("K=200-seed2"));
    QVERIFY(QFile::exists(dir.filePath(QString::fromStdString(stems[4]) + ".json")));
    QVERIFY(!QFile::exists(dir.filePath(QString::fromStdString(stems[1]) + ".json")));

    // Another task's share: the first task's runs are read back (without --resume), its own run.
    SweepRunner second(smallSpec(), dir.path().toStdString(), nullptr);
    second.setOnly({1});
    const SweepOutcome b = second.run(cancel);
    QCOMPARE(b.ran, std::size_t(1));
    QCOMPARE(b.reused, std::size_t(2));
    QVERIFY(b.data.runs[0][0] && b.data.runs[0][1] && b.data.runs[1][1]);

    // An empty share only collects.
    SweepRunner collect(smallSpec(), dir.path().toStdString(), nullptr);
    collect.setOnly({});
    const SweepOutcome c = collect.run(cancel);
    QCOMPARE(c.ran, std::size_t(0));
    QCOMPARE(c.reused, std::size_t(3));
  }
};

QTEST_GUILESS_MAIN(TestSweepRunner)
#include "test_sweep_runner.moc"
