// One state per worker with its cause, checked at every frame-sized step of every bundled scenario:
// a worker that crashed within the window is never "cold", a worker with no bindings in the window
// is never "ok", the cold D of e2-cold-d stays cold to the end (it once flipped to "ok" at ~1150 s
// with 0 bindings), and the crashed worker of invariant-crash reads crashed, then restarted.
#include <QtTest>

#include "tests/support/SimHarness.h"
#include "core/telemetry/TelemetryStore.h"
#include "core/telemetry/WorkerStateTracker.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {
struct Seen {
  std::map<std::string, std::set<std::string>> kinds;  // per worker, every state it was in
  std::map<std::string, WorkerState> last;
  std::map<std::string, std::string> cold_cause;       // the last "cold: ..." line, per worker
};

Seen play(const std::string& scenario, double seconds) {
  EventLog log;
  SimulationOptions options;
  options.duration_s = seconds;
  simulate(scenario, {}, options, &log);
  TelemetryStore store;
  WorkerStateTracker tracker;
  Seen seen;
  for (std::size_t i = 0; i < log.events.size(); i += 500) {
    store.ingest(std::vector<Event>(log.events.begin() + static_cast<long>(i),
                                    log.events.begin() + static_cast<long>(std::min(log.events.size(), i + 500))));
    bool bindings_seen = false;
    for (const WorkerSeries& w : store.workers()) bindings_seen |= w.last_admitted >= 0;
    for (const WorkerState& s : tracker.update(store)) {
      const WorkerSeries& w = store.workers()[static_cast<std::size_t>(s.store_index)];
      const std::string at = scenario + " " + s.worker + " at " + std::to_string(timeToSeconds(store.now())) + " s: " + s.cause;
      if (!w.alive) QTest::qVerify(s.kind == WorkerStateKind::Crashed, "crashed", at.c_str(), __FILE__, __LINE__);
      const bool crashed_in_window = w.crashed_at >= 0 && store.now() - w.crashed_at < tracker.options().window;
      if (crashed_in_window)
        QTest::qVerify(s.kind != WorkerStateKind::Cold, "never cold after a crash", at.c_str(), __FILE__, __LINE__);
      if (s.recent_bindings == 0 && bindings_seen)
        QTest::qVerify(s.kind != WorkerStateKind::Ok, "0 bindings is never ok", at.c_str(), __FILE__, __LINE__);
      QTest::qVerify(!s.cause.empty(), "a cause", at.c_str(), __FILE__, __LINE__);
      seen.kinds[s.worker].insert(toString(s.kind));
      if (s.kind == WorkerStateKind::Cold) seen.cold_cause[s.worker] = s.cause;
      seen.last[s.worker] = s;
    }
  }
  return seen;
}
}  // namespace

class WorkerStatesTest : public QObject {
  Q_OBJECT
 private slots:
  void everyScenarioKeepsTheInvariants_data() {
    QTest::addColumn<QString>("scenario");
    for (const char* s : {"e2-cold-d", "e3-load-floor", "evict-storm", "cascade", "invariant-crash", "reseed-storm",
                          "block-level-eviction", "unified-vs-lmetric"})
      QTest::newRow(s) << s;
  }
  void everyScenarioKeepsTheInvariants() {
    QFETCH(QString, scenario);
    const Seen seen = play(scenario.toStdString(), 1500);
    QVERIFY(!seen.last.empty());
  }

  // D2 is cold with its cause while the others serve, never "ok"; once nothing runs anywhere the
  // whole cluster reads idle (not D2 alone).
  void theColdDecodeWorkerStaysColdWithItsCause() {
    const Seen seen = play("e2-cold-d", 1466);
    QVERIFY(seen.kinds.at("D2").count("cold"));
    QVERIFY(!seen.kinds.at("D2").count("ok"));
    QVERIFY2(QString::fromStdString(seen.cold_cause.at("D2")).startsWith("cold: 0 bindings since"), seen.cold_cause.at("D2").c_str());
    QVERIFY(!seen.kinds.at("D0").count("cold"));
    if (seen.last.at("D2").kind == WorkerStateKind::Idle)
      for (const char* other : {"D0", "D1"}) QVERIFY(seen.last.at(other).kind != WorkerStateKind::Ok);
  }

  void aCrashedWorkerReadsCrashedThenRestarted() {
    const Seen seen = play("invariant-crash", 3600);
    bool crashed = false, restarted = false;
    for (const auto& [worker, kinds] : seen.kinds) {
      crashed |= kinds.count("crashed") > 0;
      restarted |= kinds.count("restarted") > 0;
    }
    QVERIFY(crashed);
    QVERIFY(restarted);
  }

  void healthTextsKeepTheirSince() {
    EventLog log;
    SimulationOptions options;
    options.duration_s = 60;
    simulate("e3-load-floor", {}, options, &log);
    TelemetryStore store;
    store.ingest(log.events);
    WorkerStateTracker tracker;
    tracker.update(store, {{"D1", "ok"}});
    const auto states = tracker.update(store, {{"D1", "unreachable: HTTP 503"}, {"D2", "degraded: /metrics 2.3 s"}});
    for (const WorkerState& s : states) {
      if (s.worker == "D1") {
        QCOMPARE(s.kind, WorkerStateKind::Unreachable);
        QVERIFY2(QString::fromStdString(s.cause).startsWith("unreachable: HTTP 503 since 60.0 s"), s.cause.c_str());
      }
      if (s.worker == "D2") QCOMPARE(s.kind, WorkerStateKind::Degraded);
    }
  }
};

QTEST_MAIN(WorkerStatesTest)
#include "test_worker_states.moc"
