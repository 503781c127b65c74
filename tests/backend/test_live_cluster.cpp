// LiveCluster: one ordered stream from many threads (sequence numbers and times never go back),
// gauges from /metrics and from batch log lines folded into Snapshots, a crashed worker down until
// a scrape sent after the crash answers (then WorkerRestarted), nothing after finish().
#include <QtTest>

#include <mutex>
#include <thread>

#include "backend/live/LiveCluster.h"
#include "tests/support/LockedEventLog.h"

using namespace kvscope;

namespace {

using Collect = kvscope::test::LockedEventLog;

RunStarted twoDecode() {
  RunStarted r;
  r.scenario = "live t";
  r.workers = {{"D0", WorkerRole::Decode, 1000}, {"D1", WorkerRole::Decode, 0}};
  r.prefill = {{"P0", WorkerRole::Prefill, 0}};
  return r;
}

}  // namespace

class TestLiveCluster : public QObject {
  Q_OBJECT
 private slots:
  void orderedFromManyThreads() {
    Collect sink;
    LiveCluster live(twoDecode(), {&sink});
    live.post(WorkerRestarted{0});  // before start(): dropped
    live.start();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 500; ++i) live.post(RequestDone{});
      });
    for (auto& t : threads) t.join();
    live.finish(false);
    live.post(RequestDone{});  // after finish(): dropped
    QCOMPARE(sink.events.size(), std::size_t(1 + 2000 + 2));
    for (std::size_t i = 0; i < sink.events.size(); ++i) {
      QCOMPARE(sink.events[i].seq, std::uint64_t(i + 1));
      if (i) QVERIFY(sink.events[i].time >= sink.events[i - 1].time);
    }
    QVERIFY(std::holds_alternative<RunStarted>(sink.events.front().payload));
    QVERIFY(std::holds_alternative<RunFinished>(sink.events.back().payload));
    QCOMPARE(live.workerNames(), (std::vector<std::string>{"D0", "D1", "P0"}));
  }

  void gaugesAndRestart() {
    Collect sink;
    LiveCluster live(twoDecode(), {&sink});
    live.start();
    BatchGauges b;
    b.running_req = 4;
    b.tokens = 250;
    b.token_usage = 0.5;
    b.prealloc_req = 2;
    b.transfer_req = 1;
    live.setBatchGauges(1, b);  // D1 has no capacity yet: the line's ratio gives it
    live.setBatchGauges(7, b);  // no such worker: ignored
    WorkerGauges g;
    g.worker = 0;
    g.kv_used = 600;
    g.kv_capacity = 1000;
    const SimTime before_crash = live.now();
    live.setGauges(g, before_crash);
    live.post(WorkerCrashed{0, "boom", 0});
    g.kv_used = 700;
    live.setGauges(g, before_crash);  // answered a request sent before the crash: proves nothing
    live.snapshot();
    Snapshot s = std::get<Snapshot>(sink.events.back().payload);
    QCOMPARE(s.workers[0].kv_used, std::int64_t(600));
    QVERIFY(!s.workers[0].alive);
    QCOMPARE(s.workers[1].kv_used, std::int64_t(250));
    QCOMPARE(s.workers[1].kv_capacity, std::int64_t(500));
    QCOMPARE(s.workers[1].running, 4);
    QCOMPARE(s.workers[1].pending_seeds, 3);
    live.setGauges(g, live.now());
    QVERIFY(std::holds_alternative<WorkerRestarted>(sink.events.back().payload));
    live.snapshot();
    s = std::get<Snapshot>(sink.events.back().payload);
    QVERIFY(s.workers[0].alive);
    QCOMPARE(s.workers[0].kv_used, std::int64_t(700));
  }

  void health() {
    Collect c;
    LiveCluster live(twoDecode(), {&c});
    live.start();
    live.setHealth(2, WorkerHealth::Unreachable, "GET x: Connection");
    live.setHealth(2, WorkerHealth::Unreachable, "GET x: Connection");  // unchanged: no event
    live.setHealth(2, WorkerHealth::Ok, "");
    live.setHealth(9, WorkerHealth::Ok, "");  // out of range: ignored
    // The stream carries each change (a console served from elsewhere sees it), not each scrape.
    const auto changes = c.of<WorkerHealthChanged>();
    QCOMPARE(changes.size(), std::size_t(2));
    QCOMPARE(changes[0].worker, std::string("P0"));
    QCOMPARE(changes[0].health, WorkerHealth::Unreachable);
    QCOMPARE(changes[0].reason, std::string("GET x: Connection"));
    QCOMPARE(changes[1].health, WorkerHealth::Ok);
    const auto s = live.statuses();
    QCOMPARE(s[2].name, std::string("P0"));
    QCOMPARE(s[2].health, WorkerHealth::Ok);
    QCOMPARE(s[2].scrapes, 3L);
    QCOMPARE(s[2].failed_scrapes, 2L);
    QCOMPARE(s[0].health, WorkerHealth::Unknown);
  }
};

QTEST_GUILESS_MAIN(TestLiveCluster)
#include "test_live_cluster.moc"
