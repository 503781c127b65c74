// The lab's replayer dispatch modes (gahow/agentic-kvc replayer/replay.py `--dispatch-mode`, its
// README @ 54e1f5266ab076aaaaf6a37e24673eecbe700a04): every turn's fire time is read back from the
// stream (a request's end minus its E2E) and checked against the mode's rule, on a hand-made
// workload whose trace times and think times differ turn by turn.
#include <QtTest>

#include <map>

#include "core/sim/ClusterSimulator.h"

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

Log run(Dispatch mode, long max_inflight = 0, double deadline = 0, double time_scale = 1) {
  Scenario s = Scenario::load("unified-vs-lmetric");
  s.workload.dispatch = mode;
  s.workload.max_inflight_sessions = max_inflight;
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
