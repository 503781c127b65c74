// The lab's replayer dispatch modes (gahow/agentic-kvc replayer/replay.py `--dispatch-mode`, its
// README @ 54e1f5266ab076aaaaf6a37e24673eecbe700a04): every turn's fire time is read back from the
// stream (a request's end minus its E2E) and checked against the mode's rule, on a hand-made
// workload whose trace times and think times differ turn by turn.
#include <QtTest>

#include <map>
#include <set>

#include "core/sim/ClusterSimulator.h"
#include "core/workload/SyntheticAgenticGenerator.h"

using namespace kvscope;

namespace {

struct Fired {
  SimTime fire = 0, done = 0, slip = 0;
  bool ok = true;
  std::string error;
};

// Every request, by (session, turn).
struct Log : EventSink {
  std::map<std::pair<SessionId, int>, Fired> turns;
  RunStarted run;
  void onEvent(const Event& e) override {
    if (const auto* r = std::get_if<RunStarted>(&e.payload)) run = *r;
    const auto* d = std::get_if<RequestDone>(&e.payload);
    if (!d) return;
    turns[{d->session, d->turn}] =
        Fired{e.time - d->e2e, e.time, d->dispatch_slip, d->status == RequestStatus::Ok, d->error};
  }
};

// Six sessions of four turns: starts 0, 7, 14, ... s; turn offsets grow by 20 s; think times of
// 2, 3, 4 s. Prompts of 20-40K tokens on four H20 instances keep each turn seconds long, so
// tracets meets both of its cases (trace time ahead of the finish, and behind it).
Workload workload() {
  Workload w;
  for (int i = 0; i < 6; ++i) {
    Session s;
    s.id = 100 + static_cast<SessionId>(i);
    s.start_s = 7.0 * i;
    for (int k = 0; k < 4; ++k) {
      Turn t;
      t.offset_s = 20.0 * k;
      t.think_s = k == 0 ? 0 : 1.0 + k;
      t.output_tokens = 200;
      t.prompt.input_tokens = 20000 + 5000 * k;
      t.prompt.session_scope = 0x5e5 + static_cast<std::uint64_t>(i);
      s.turns.push_back(t);
    }
    w.sessions.push_back(s);
  }
  return w;
}

Log run(Dispatch mode, long max_inflight = 0, double deadline = 0, double time_scale = 1, long max_requests = 0) {
  Scenario s = Scenario::load("unified-vs-lmetric");
  s.workload.dispatch = mode;
  s.workload.max_inflight_sessions = max_inflight;
  s.workload.max_inflight_requests = max_requests;
  s.workload.wall_deadline_s = deadline;
  s.workload.time_scale = time_scale;
  s.duration_s = 3600;
  Log log;
  ClusterSimulator sim(s, workload(), 1);
  sim.addSink(&log);
  sim.start();
  sim.run();
  sim.finish(true);
  return log;
}

SimTime trace(int session, int turn, double scale = 1) { return secondsToTime((7.0 * session + 20.0 * turn) * scale); }

}  // namespace

class TestDispatch : public QObject {
  Q_OBJECT
 private slots:
  void everyModeRunsEveryTurn_data() {
    QTest::addColumn<int>("mode");
    for (Dispatch d : {Dispatch::Open, Dispatch::Closed, Dispatch::TraceTs, Dispatch::ThinkTime, Dispatch::Burst})
      QTest::newRow(toString(d)) << static_cast<int>(d);
  }
  void everyModeRunsEveryTurn() {
    QFETCH(int, mode);
    const Log log = run(static_cast<Dispatch>(mode));
    QCOMPARE(log.turns.size(), std::size_t{24});
    QCOMPARE(log.run.dispatch, std::string(toString(static_cast<Dispatch>(mode))));
    QCOMPARE(log.run.offered_requests, std::int64_t{24});
    QCOMPARE(log.run.trace_window_s, 35.0 + 60.0);  // first turn at 0, the last at 35 + 60
    for (const auto& [key, f] : log.turns) QVERIFY2(f.ok, f.error.c_str());
  }

  // tracets: turn k fires at max(turn k-1 finished, its trace time), and never before either.
  void tracetsWaitsForBoth() {
    const double scale = 0.3;  // trace gaps of 6 s: some turns take longer, some do not
    const Log log = run(Dispatch::TraceTs, 0, 0, scale);
    int behind = 0, ahead = 0;
    for (int i = 0; i < 6; ++i) {
      QCOMPARE(log.turns.at({100 + i, 1}).fire, trace(i, 0, scale));
      for (int k = 1; k < 4; ++k) {
        const Fired& f = log.turns.at({100 + i, k + 1});
        const SimTime previous = log.turns.at({100 + i, k}).done;
        QCOMPARE(f.fire, std::max(previous, trace(i, k, scale)));
        QCOMPARE(f.slip, f.fire - trace(i, k, scale));
        (previous > trace(i, k, scale) ? behind : ahead) += 1;
      }
    }
    // Both cases happen: the test would not see a rule that ignores one of them.
    QVERIFY2(behind > 0 && ahead > 0, qPrintable(QString("behind %1, ahead %2").arg(behind).arg(ahead)));
  }

  // thinktime: turn 1 at its trace time, turn k exactly its think time after turn k-1 finished.
  void thinktimeAddsTheThinkTime() {
    const Log log = run(Dispatch::ThinkTime);
    for (int i = 0; i < 6; ++i) {
      QCOMPARE(log.turns.at({100 + i, 1}).fire, trace(i, 0));
      QCOMPARE(log.turns.at({100 + i, 1}).slip, SimTime{0});
      for (int k = 1; k < 4; ++k)
        QCOMPARE(log.turns.at({100 + i, k + 1}).fire, log.turns.at({100 + i, k}).done + secondsToTime(1.0 + k));
    }
  }

  // burst: every session's first turn at 0, each next one the instant the previous finished.
  void burstStartsEverySessionAtZero() {
    const Log log = run(Dispatch::Burst);
    for (int i = 0; i < 6; ++i) {
      QCOMPARE(log.turns.at({100 + i, 1}).fire, SimTime{0});
      QCOMPARE(log.turns.at({100 + i, 1}).slip, -trace(i, 0));
      for (int k = 1; k < 4; ++k) QCOMPARE(log.turns.at({100 + i, k + 1}).fire, log.turns.at({100 + i, k}).done);
    }
  }

  // open: each turn at its trace time, whether or not the previous one finished.
  void openIgnoresThePreviousTurn() {
    const Log log = run(Dispatch::Open, 0, 0, 0.1);  // ten times the rate: turns overlap
    int overlapping = 0;
    for (int i = 0; i < 6; ++i)
      for (int k = 0; k < 4; ++k) {
        QCOMPARE(log.turns.at({100 + i, k + 1}).fire, trace(i, k, 0.1));
        if (k > 0 && log.turns.at({100 + i, k + 1}).fire < log.turns.at({100 + i, k}).done) ++overlapping;
      }
    QVERIFY(overlapping > 0);
  }

  // At most two sessions in flight: a session holds its slot from its first turn to its last; the
  // next one waits and fires at once when a slot frees (under tracets its overdue turns follow).
  void maxInflightSessionsCapsSessions() {
    const Log log = run(Dispatch::TraceTs, 2);
    QCOMPARE(log.turns.size(), std::size_t{24});
    std::vector<std::pair<SimTime, int>> edges;  // +1 at a session's first fire, -1 at its last end
    for (int i = 0; i < 6; ++i) {
      edges.emplace_back(log.turns.at({100 + i, 1}).fire, +1);
      edges.emplace_back(log.turns.at({100 + i, 4}).done, -1);
    }
    std::sort(edges.begin(), edges.end());  // an end before a start at the same instant
    int open = 0, most = 0;
    for (const auto& [t, d] : edges) most = std::max(most, open += d);
    QCOMPARE(most, 2);
    // Session 2 (starts at 14 s) waits for the first to finish.
    QVERIFY(log.turns.at({102, 1}).fire > trace(2, 0));
    QCOMPARE(log.turns.at({102, 1}).fire, std::min(log.turns.at({100, 4}).done, log.turns.at({101, 4}).done));
  }

  // At most three requests in flight (a replayer's request semaphore, the lab's E-series
  // concurrency_limit): a turn waits for a slot in the order turns became ready, and a session gives
  // its slot back between turns, so all six sessions progress where a session cap would hold three.
  void maxInflightRequestsCapsRequests() {
    const Log log = run(Dispatch::Burst, 0, 0, 1, 3);
    QCOMPARE(log.turns.size(), std::size_t{24});
    std::vector<std::pair<SimTime, int>> edges;  // +1 at a request's fire, -1 at its end
    for (const auto& [key, f] : log.turns) {
      QVERIFY2(f.ok, f.error.c_str());
      edges.emplace_back(f.fire, +1);
      edges.emplace_back(f.done, -1);
    }
    std::sort(edges.begin(), edges.end());
    int open = 0, most = 0;
    for (const auto& [t, d] : edges) most = std::max(most, open += d);
    QCOMPARE(most, 3);
    // Three sessions fire at 0; the other three wait for the first ends, one slot each.
    int at_zero = 0;
    for (int i = 0; i < 6; ++i) at_zero += log.turns.at({100 + i, 1}).fire == 0;
    QCOMPARE(at_zero, 3);
    // Every turn fired either at 0, when the session's previous turn ended, or when another request
    // ended (its slot): never at a moment nothing freed one.
    std::set<SimTime> done_times;
    for (const auto& [key, f] : log.turns) done_times.insert(f.done);
    for (const auto& [key, f] : log.turns) QVERIFY(f.fire == 0 || done_times.contains(f.fire));
    // A session cap of three would have kept sessions 3-5 out until three sessions ended.
    const Log sessions = run(Dispatch::Burst, 3);
    QVERIFY(log.turns.at({103, 1}).fire < sessions.turns.at({103, 1}).fire);
  }

  // A synthetic session's trace times carry each turn's service time, as a recording's do: turn k at
  // turn k-1's time + its prefill and decode alone on a worker + the think time.
  void syntheticTraceTimesCarryServiceTime() {
    SyntheticAgenticSpec spec;
    spec.sessions = 3;
    spec.turns = Distribution::fixed(4);
    spec.think_s = Distribution::fixed(2);
    spec.boilerplate_tokens = Distribution::fixed(1000);
    spec.first_turn_tokens = Distribution::fixed(3000);
    spec.new_tokens = Distribution::fixed(500);
    spec.output_tokens = Distribution::fixed(100);
    const RecordedService service{10000, 0.05, 0, 0.01, 0.001, 0};
    const Workload thinking = SyntheticAgenticGenerator::generate(spec, 7);
    const Workload recorded = SyntheticAgenticGenerator::generate(spec, 7, 1, service);
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& a = thinking.sessions[i].turns;
      const auto& b = recorded.sessions[i].turns;
      QCOMPARE(a.size(), b.size());
      QCOMPARE(b[0].offset_s, 0.0);
      // Turn 1: 3,000 uncached tokens (the boilerplate was cached) in 0.05 + 0.3 s, 100 tokens at
      // 11 ms; turn 2: its 500 new tokens (the previous output is cached) in 0.05 + 0.05 s.
      QCOMPARE(b[1].offset_s, 0.35 + 1.1 + 2.0);
      QCOMPARE(b[2].offset_s, b[1].offset_s + 0.1 + 1.1 + 2.0);
      for (std::size_t k = 0; k < a.size(); ++k) {
        QCOMPARE(a[k].offset_s, 2.0 * static_cast<double>(k));  // think times alone without a profile
        QCOMPARE(b[k].think_s, a[k].think_s);                   // the same draws either way
        QCOMPARE(b[k].prompt.input_tokens, a[k].prompt.input_tokens);
      }
    }
  }

  // The wall deadline: what is still in flight fails at it, nothing fires after it.
  void wallDeadlineEndsTheRun() {
    const Log log = run(Dispatch::TraceTs, 0, 50);
    const SimTime deadline = secondsToTime(50);
    int failed = 0;
    for (const auto& [key, f] : log.turns) {
      QVERIFY(f.fire < deadline);
      QVERIFY(f.done <= deadline);
      if (!f.ok) {
        ++failed;
        QCOMPARE(f.done, deadline);
        QVERIFY2(f.error.find("wall deadline") != std::string::npos, f.error.c_str());
      }
    }
    QVERIFY(failed > 0);
    QVERIFY(log.turns.size() < 24);  // the later turns were never offered a chance
  }
};

QTEST_GUILESS_MAIN(TestDispatch)
#include "test_dispatch.moc"
