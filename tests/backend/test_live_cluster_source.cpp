// LiveClusterSource, the console's Source over a live cluster, against a real local HTTP server
// serving the published SGLang /metrics sample for D0, a port that refuses connections for D1, and
// a real log file to which the test appends D0's crash. What reaches the staging buffer is what the
// console draws; the workers' health reaches it only through status().
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <fstream>
#include <thread>

#include "backend/source/LiveClusterSource.h"
#include "core/live/ClusterConfigLoader.h"
#include "core/model/Error.h"
#include "tests/support/FakeSglangCluster.h"

using namespace kvscope;

namespace {
// Everything staged so far, kept across drains.
struct Drained {
  std::vector<Event> events;
  void from(Source& s) {
    std::vector<Event> batch;
    s.staging().drain(batch);
    events.insert(events.end(), batch.begin(), batch.end());
  }
  template <class T>
  std::vector<T> of() const {
    std::vector<T> out;
    for (const auto& e : events)
      if (const auto* x = std::get_if<T>(&e.payload)) out.push_back(*x);
    return out;
  }
};

LiveSession::Options quick() {
  LiveSession::Options o;
  o.tail.poll_ms = 20;
  o.tail.idle_ms = 200;  // a traceback ends when the log goes quiet this long
  return o;
}
}  // namespace

class TestLiveClusterSource : public QObject {
  Q_OBJECT
 private slots:
  void watchesTheClusterAndReportsHealth() {
    QTemporaryDir dir;
    test::FakeSglangCluster fake(dir.path().toStdString());
    LiveClusterSource source(ClusterConfigLoader::load(fake.file()), quick());
    QCOMPARE(source.description(), std::string("live cluster lab-local"));
    // A real cluster is watched, not driven: no pause, speed or seek; no knobs without a router.
    const SourceCapabilities caps = source.capabilities();
    QVERIFY(!caps.pause && !caps.speed && !caps.seek && !caps.knobs);
    QCOMPARE(source.status().state, SourceState::Starting);
    std::string error;
    QVERIFY(!source.control()->seek(0, consoleAuthor(), &error));
    QVERIFY(!error.empty());

    source.start();
    QCOMPARE(source.status().state, SourceState::Running);
    // D1's /metrics refuses connections: the status detail says so, with the reason.
    QTRY_VERIFY_WITH_TIMEOUT(
        QString::fromStdString(source.status().detail).contains("D1 unreachable: GET http://127.0.0.1:"), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(source.status().worker_health["D0"], std::string("ok"), 5000);
    SourceStatus st = source.status();
    QVERIFY2(st.detail.find("Connection") != std::string::npos, st.detail.c_str());
    QVERIFY2(st.detail.find("D0") == std::string::npos, st.detail.c_str());  // healthy workers are not listed
    QVERIFY(st.worker_health.at("D1").rfind("unreachable: ", 0) == 0);
    QCOMPARE(st.worker_health.at("P0"), std::string());  // no metrics URL: never scraped

    Drained seen;
    QTRY_VERIFY_WITH_TIMEOUT((seen.from(source), seen.of<Snapshot>().size() >= 2), 5000);
    const auto run = seen.of<RunStarted>();
    QCOMPARE(run.size(), std::size_t(1));
    QCOMPARE(run[0].workers.size(), std::size_t(2));
    QCOMPARE(run[0].workers[0].name, std::string("D0"));
    QCOMPARE(run[0].prefill.at(0).name, std::string("P0"));
    // Health travels in the stream too, for a console attached through serve --live.
    bool d1_unreachable = false;
    for (const auto& h : seen.of<WorkerHealthChanged>())
      d1_unreachable |= h.worker == "D1" && h.health == WorkerHealth::Unreachable && !h.reason.empty();
    QVERIFY(d1_unreachable);
    // D0's gauges from the fixture (num_running_reqs 162, num_used_tokens 123859).
    const WorkerGauges d0 = seen.of<Snapshot>().back().workers.at(0);
    QCOMPARE(d0.running, 162);
    QCOMPARE(d0.kv_used, std::int64_t(123859));

    fake.crashD0();
    QTRY_VERIFY_WITH_TIMEOUT((seen.from(source), !seen.of<WorkerCrashed>().empty()), 5000);
    const WorkerCrashed crash = seen.of<WorkerCrashed>().front();
    QCOMPARE(crash.worker, 0);
    QVERIFY2(crash.reason.find("AssertionError") != std::string::npos, crash.reason.c_str());
    // Sequence numbers and times come in order, as from any other source.
    for (std::size_t i = 1; i < seen.events.size(); ++i) {
      QCOMPARE(seen.events[i].seq, seen.events[i - 1].seq + 1);
      QVERIFY(seen.events[i].time >= seen.events[i - 1].time);
    }

    source.stop();
    QCOMPARE(source.status().state, SourceState::Finished);
    seen.from(source);
    QCOMPARE(seen.of<RunFinished>().size(), std::size_t(1));
    source.stop();  // idempotent
  }

  void knobsOnlyWithARouterSection() {
    QTemporaryDir dir;
    test::FakeSglangCluster fake(dir.path().toStdString(), true);
    LiveClusterSource source(ClusterConfigLoader::load(fake.file()), quick());
    QVERIFY(source.capabilities().knobs);
    QVERIFY(!source.capabilities().pause);
    source.start();
    std::atomic<int> done{0};
    std::string error = "not called";
    source.control()->applyKnobs({{"K", 200}}, consoleAuthor(), [&](KnobRegistry::Result r) {
      error = r.ok ? "" : r.error;
      done = 1;
    });
    QTRY_COMPARE_WITH_TIMEOUT(done.load(), 1, 5000);
    QVERIFY2(error.empty(), error.c_str());
    Drained seen;
    QTRY_VERIFY_WITH_TIMEOUT((seen.from(source), !seen.of<KnobChanged>().empty()), 5000);
    QCOMPARE(seen.of<RunStarted>().at(0).policy, std::string("kv-aware"));
    const KnobChanged k = seen.of<KnobChanged>().front();
    QCOMPARE(k.name, std::string("K"));
    QCOMPARE(k.new_value, 200.0);
    source.stop();
  }

  void knobsRefusedWithoutARouter() {
    QTemporaryDir dir;
    test::FakeSglangCluster fake(dir.path().toStdString());
    LiveClusterSource source(ClusterConfigLoader::load(fake.file()), quick());
    bool ok = true;
    std::string error;
    source.control()->applyKnobs({{"K", 200}}, consoleAuthor(), [&](KnobRegistry::Result r) {
      ok = r.ok;
      error = r.error;
    });
    QVERIFY(!ok);
    QVERIFY2(!error.empty(), "the refusal says why");
  }

  void unreadableLogShowsInTheStatus() {
    QTemporaryDir dir;
    test::FakeSglangCluster fake(dir.path().toStdString());
    ClusterConfig config = ClusterConfigLoader::load(fake.file());
    config.workers.at(2).logs = {dir.filePath("missing/p0.log").toStdString()};
    LiveClusterSource source(std::move(config), quick());
    source.start();
    QTRY_VERIFY_WITH_TIMEOUT(QString::fromStdString(source.status().detail).contains("p0.log: "), 5000);
  }

  void badClusterFileNamesFileLineAndField() {
    QTemporaryDir dir;
    const std::string bad = dir.filePath("bad.yaml").toStdString();
    std::ofstream(bad) << "name: broken\nworkers:\n  - id: D0\n    role: decoder\n    logs: d0.log\n";
    try {
      LiveClusterSource source(bad);
      QFAIL("a bad cluster file was accepted");
    } catch (const InputError& e) {
      const std::string what = e.what();
      QVERIFY2(what.find("bad.yaml:4: field 'workers[0].role'") != std::string::npos, what.c_str());
    }
    try {
      LiveClusterSource source(dir.filePath("nowhere.yaml").toStdString());
      QFAIL("a missing cluster file was accepted");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("nowhere.yaml") != std::string::npos, e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestLiveClusterSource)
#include "test_live_cluster_source.moc"
