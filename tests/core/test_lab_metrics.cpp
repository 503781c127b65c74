// The metrics the lab judges by (core/metrics/LabMetrics.h), on a hand-made stream whose every
// number is worked out below, then as a property of simulated runs: the engine's hit rate never
// exceeds what an unbounded cache would hit.
#include <set>

#include <QtTest>

#include <nlohmann/json.hpp>

#include "core/metrics/LabMetricsCollector.h"
#include "core/metrics/SummaryCollector.h"
#include "core/run/SimulationRun.h"
#include "core/sweep/RunSummaryJson.h"
#include "core/workload/SyntheticAgenticGenerator.h"

using namespace kvscope;

namespace {

Event done(SimTime end_s, WorkerId w, int turn, std::int64_t input, std::int64_t cached, double ttft_s, double e2e_s,
           std::int64_t output, std::int64_t intra, std::int64_t any, double slip_s, bool ok = true) {
  RequestDone d;
  d.worker = w;
  d.turn = turn;
  d.input_tokens = input;
  d.cached_tokens = cached;
  d.ttft = secondsToTime(ttft_s);
  d.e2e = secondsToTime(e2e_s);
  d.output_tokens = output;
  d.ceiling_intra_tokens = intra;
  d.ceiling_any_tokens = any;
  d.dispatch_slip = secondsToTime(slip_s);
  d.status = ok ? RequestStatus::Ok : RequestStatus::Failed;
  return Event{0, secondsToTime(end_s), d};
}

}  // namespace

class TestLabMetrics : public QObject {
  Q_OBJECT
 private slots:
  void handWorkedStream() {
    LabMetricsCollector c;
    RunStarted run;
    run.workers = {{"I0", WorkerRole::Unified, 1}, {"I1", WorkerRole::Unified, 1}};
    run.offered_requests = 5;
    run.trace_window_s = 10;
    c.onEvent(Event{0, 0, run});
    // fired at 0, 2, 4, 6 (end - e2e); the failed one at 8.
    c.onEvent(done(10, 0, 1, 30000, 0, 2, 10, 101, 0, 5000, 0));       // HEAVY (30,000 new), TPOT 8/100
    c.onEvent(done(12, 0, 2, 10000, 8000, 1, 10, 11, 8000, 9000, 1));  // WARM (80% cached), TPOT 9/10
    c.onEvent(done(14, 1, 1, 26000, 6000, 3, 10, 1, 0, 6000, 3));      // HEAVY: exactly 20,000 new (>=)
    c.onEvent(done(16, 1, 2, 12000, 4000, 4, 10, 5, 4000, 4000, -2));  // MEDIUM (8,000 new, 33% cached); slip < 0 -> 0
    c.onEvent(done(20, 1, 3, 5000, -1, 0, 12, 1, 0, 0, 4, false));     // failed: hit unknown, slip counts
    const LabMetrics m = c.metrics();
    QCOMPARE(*m.apc, 18000.0 / 78000);
    QCOMPARE(*m.apc_ceiling_intra, (0 + 8000 + 0 + 4000) / 78000.0);
    QCOMPARE(*m.apc_ceiling_any, (5000 + 9000 + 6000 + 4000) / 78000.0);
    QCOMPARE(m.tpot_s->count, std::size_t{3});                        // output 1: no TPOT
    QCOMPARE(m.tpot_s->p50, 0.9);                                     // 0.08, 0.9 (9 s / 10), 1.5
    QCOMPARE(m.uncached_tokens->p50, 8000.0 + (20000 - 8000) * 0.5);  // 2000, 8000, 20000, 30000
    QCOMPARE(m.apc_by_turn.at(1), 6000.0 / 56000);
    QCOMPARE(m.apc_by_turn.at(2), 12000.0 / 22000);
    QVERIFY(!m.apc_by_turn.count(3));
    // TTFT p90 of I0: 1..2 -> 1.9; I1: 3..4 -> 3.9.
    QCOMPARE(*m.worker_ttft_p90_median_s, (1.9 + 3.9) / 2);
    QCOMPARE(*m.worker_ttft_p90_max_s, 3.9);
    QCOMPARE(*m.request_balance, 1.0);
    QCOMPARE(*m.decode_tps, (101 + 11 + 1 + 5) / 20.0);  // makespan: fired 0, last end 20
    QCOMPARE(*m.total_tps, (78000 + 118) / 20.0);
    QCOMPARE(*m.wall_amplification, 2.0);
    QCOMPARE(*m.completion_rate, 4.0 / 5);
    QCOMPARE(m.dispatch_slip_s->p50, 1.0);  // 0, 0, 1, 3, 4
    QCOMPARE(m.request_classes.at("HEAVY").count, 2L);
    QCOMPARE(m.request_classes.at("WARM").count, 1L);
    QCOMPARE(m.request_classes.at("MEDIUM").count, 1L);
    QCOMPARE(*m.request_classes.at("HEAVY").ttft_p90_s, 2.9);
    QCOMPARE(*m.request_classes.at("MEDIUM").e2e_p90_s, 10.0);
  }

  void classBoundaries() {
    QCOMPARE(LabMetrics::classOf(20000, 0), "HEAVY");
    QCOMPARE(LabMetrics::classOf(19999, 0), "MEDIUM");
    QCOMPARE(LabMetrics::classOf(4999, 0), "WARM");
    QCOMPARE(LabMetrics::classOf(100000, 50001), "HEAVY");  // more than half cached, but 49,999 new
    QCOMPARE(LabMetrics::classOf(20000, 10001), "WARM");
  }

  // A summary's JSON carries every key under its name, and reads back the same.
  void jsonRoundTrip() {
    Scenario s = Scenario::load("unified-vs-lmetric");
    SimulationOptions o;
    o.duration_s = 900;
    o.dispatch = Dispatch::TraceTs;
    const RunSummary summary = runSimulation(s, o);
    const nlohmann::json j = summary.toJson();
    for (const char* key : {"apc", "apc_ceiling_intra", "apc_ceiling_any", "tpot_s", "uncached_tokens", "apc_by_turn",
                            "worker_ttft_p90_s", "request_balance", "decode_tps", "total_tps", "wall_amplification",
                            "completion_rate", "dispatch_slip_s", "request_classes"}) {
      QVERIFY2(j.contains(key), key);
      QVERIFY2(!j.at(key).is_null(), key);
    }
    for (const char* key : {"mean", "p50", "p90", "p99"}) QVERIFY(j.at("tpot_s").contains(key));
    for (const char* key : {"median", "max"}) QVERIFY(j.at("worker_ttft_p90_s").contains(key));
    for (const char* c : {"WARM", "MEDIUM", "HEAVY"}) QVERIFY(j.at("request_classes").contains(c));
    QCOMPARE(QString::fromStdString(RunSummaryJson::fromJson(j).toJson().dump()), QString::fromStdString(j.dump()));
  }

  // The workload's own shape (what `calibrate fit` matches to a trace characterisation), worked out:
  // session 1 has three turns fired 2 s and 5 s after the previous ended; sessions 2 and 3 one each.
  void workloadShapeHandWorked() {
    LabMetricsCollector c;
    auto turn = [&](SessionId session, int k, double end_s, double e2e_s, std::int64_t input, std::int64_t intra,
                    std::int64_t any) {
      Event e = done(end_s, 0, k, input, 0, 0.5, e2e_s, 10, intra, any, 0);
      std::get<RequestDone>(e.payload).session = session;
      c.onEvent(e);
    };
    turn(1, 1, 10, 10, 10000, 0, 3000);
    turn(2, 1, 11, 11, 40000, 0, 3000);  // the one over 32,768
    turn(1, 2, 20, 8, 12000, 10000, 13000);
    turn(3, 1, 22, 2, 8000, 0, 0);
    turn(1, 3, 30, 5, 14000, 12000, 15000);
    const WorkloadShape w = c.metrics().workload;
    QCOMPARE(w.requests, 5L);
    QCOMPARE(w.sessions, 3L);
    QCOMPARE(*w.single_turn_share, 2.0 / 3);
    QCOMPARE(*w.share_over_32k, 0.2);
    QCOMPARE(*w.inter_turn_p50_s, 3.5);  // gaps 2 and 5
    QCOMPARE(*w.reuse_intra_share, 22000.0 / 34000);
    QVERIFY(std::abs(w.input_tokens->p50 - 12000) <= 12000 * 0.01);  // the sketch's relative error
  }

  // The generator's new shape fields do what they say, and a workload without them keeps its stream.
  void generatorShapeFields() {
    SyntheticAgenticSpec spec;
    spec.sessions = 4000;
    spec.start_window_s = 600;
    spec.turns = Distribution::fixed(5);
    const Workload before = SyntheticAgenticGenerator::generate(spec, 7);
    spec.arrivals = SyntheticAgenticSpec::Arrivals::Poisson;
    spec.single_turn_share = 0.9;
    spec.boilerplate_variants = 8;
    const Workload w = SyntheticAgenticGenerator::generate(spec, 7);
    long single = 0;
    std::set<std::uint64_t> scopes;
    for (std::size_t i = 0; i < w.sessions.size(); ++i) {
      const Session& s = w.sessions[i];
      single += s.turns.size() == 1;
      scopes.insert(s.turns.front().prompt.shared_scope);
      QVERIFY(s.start_s >= 0 && s.start_s <= 600);
      if (i > 0) QVERIFY(w.sessions[i - 1].start_s <= s.start_s);  // Poisson starts come sorted
    }
    // Binomial(4000, 0.9): sd 19; 6 sd either side.
    QVERIFY2(std::abs(single - 3600) < 114, qPrintable(QString::number(single)));
    QCOMPARE(scopes.size(), std::size_t{8});
    // Spread arrivals: one session per 0.15-s slot, in order.
    for (std::size_t i = 0; i < before.sessions.size(); ++i) {
      QVERIFY(before.sessions[i].start_s >= 0.15 * static_cast<double>(i) - 1e-9);
      QVERIFY(before.sessions[i].start_s <= 0.15 * static_cast<double>(i + 1) + 1e-9);
      QCOMPARE(before.sessions[i].turns.size(), std::size_t{5});
    }
  }

  // The engine's hit rate is bounded by the unbounded cache's, intra by any, on real runs of every
  // kind of cluster and eviction.
  void apcNeverAboveItsCeiling_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("policy");
    for (const char* s : {"e3-load-floor", "evict-storm", "block-level-eviction", "unified-vs-lmetric"})
      for (const char* p : {"", "lmetric", "leastwork"}) QTest::newRow(qPrintable(QString(s) + " " + p)) << s << p;
  }
  void apcNeverAboveItsCeiling() {
    QFETCH(QString, scenario);
    QFETCH(QString, policy);
    SimulationOptions o;
    o.duration_s = 1200;
    o.policy = policy.toStdString();
    const RunSummary s = runSimulation(Scenario::load(scenario.toStdString()), o);
    QVERIFY(s.lab.apc && s.lab.apc_ceiling_intra && s.lab.apc_ceiling_any);
    QVERIFY2(*s.lab.apc > 0 && *s.lab.apc <= *s.lab.apc_ceiling_any,
             qPrintable(QString("apc %1 ceiling %2").arg(*s.lab.apc).arg(*s.lab.apc_ceiling_any)));
    QVERIFY(*s.lab.apc_ceiling_intra <= *s.lab.apc_ceiling_any);
    QVERIFY(*s.lab.apc_ceiling_any <= 1.0);
  }
};

QTEST_GUILESS_MAIN(TestLabMetrics)
#include "test_lab_metrics.moc"
