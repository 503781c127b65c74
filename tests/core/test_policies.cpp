// Every routing policy against hand-computed contexts: a wrong formula, unit, tie-break or gate
// changes at least one exact number or ranking below.
#include <QtTest>

#include <cmath>
#include <map>
#include <set>

#include "core/router/RoutingPolicy.h"

using namespace kvscope;

namespace {

// A hand-built cluster view: loads, a real prefix index, knobs; `route` runs one decision.
struct Cluster {
  std::vector<WorkerLoad> workers;
  std::vector<BlockHash> hashes;  // the request's blocks
  PrefixIndex index;
  KnobRegistry knobs;
  SessionId session = 1;
  int block_size = 24;
  int input_tokens = 0;
  WorkerId bound = kNoWorker;
  std::uint64_t decision_index = 0;
  double uniform = 0;

  explicit Cluster(int n, int blocks = 10) : workers(static_cast<std::size_t>(n)) {
    for (int i = 0; i < blocks; ++i) hashes.push_back(1000 + static_cast<BlockHash>(i));
    input_tokens = blocks * block_size;
  }
  // Worker `w` holds the request's first `count` blocks, stored by session `by`.
  void holds(WorkerId w, int count, SessionId by) {
    index.stored(w, by, std::span<const BlockHash>(hashes).first(static_cast<std::size_t>(count)));
  }
  void load(WorkerId w, int running, int queued = 0) {
    workers[w].running = running;
    workers[w].queued = queued;
  }
  bool knob(const char* name, double value) { return knobs.apply({{name, value}}, "test").ok; }
  RouteDecision route(std::string_view policy) const {
    PrefixIndex::Match m;
    index.match(hashes, session, static_cast<int>(workers.size()), m);
    const RouteRequest req{7, session, 1, input_tokens, hashes};
    const RouteContext ctx{req, workers, m, block_size, bound, knobs, decision_index, uniform};
    RouteDecision d;
    makePolicy(policy)->decide(ctx, d);
    return d;
  }
};

QList<int> ranking(const RouteDecision& d) {
  QList<int> out;
  for (const auto& c : d.candidates) out.push_back(c.worker);
  return out;
}

const CandidateScore& of(const RouteDecision& d, WorkerId w) {
  for (const auto& c : d.candidates)
    if (c.worker == w) return c;
  qFatal("worker %d has no candidate", w);
}

double part(const RouteDecision& d, WorkerId w, const char* name) { return of(d, w).component(name); }

}  // namespace

class TestPolicies : public QObject {
  Q_OBJECT
 private slots:
  void factoryKnowsEveryName() {
    QCOMPARE(policyNames().size(), std::size_t{7});
    for (auto name : policyNames()) {
      auto p = makePolicy(name);
      QVERIFY(p != nullptr);
      QCOMPARE(p->name(), name);
    }
    QVERIFY(makePolicy("no-such-policy") == nullptr);
  }

  // Invariants of every policy on a cluster whose dead worker 0 would otherwise be everyone's pick.
  void invariants_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<bool>("allDead");
    for (auto name : policyNames()) {
      const QString n = QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
      QTest::newRow(qPrintable(n)) << n << false;
      QTest::newRow(qPrintable(n + " all dead")) << n << true;
    }
  }
  void invariants() {
    QFETCH(QString, policy);
    QFETCH(bool, allDead);
    Cluster c(5);
    c.holds(0, 10, 1);
    c.holds(2, 6, 1);
    c.holds(3, 3, 2);
    c.workers[0].alive = false;
    const int loads[] = {0, 4, 2, 3, 1};
    for (int w = 0; w < 5; ++w) {
      c.load(w, loads[w], w % 2);
      c.workers[w].assigned_sessions = loads[w];
      c.workers[w].kv_used = 100 * loads[w];
      c.workers[w].ongoing_tokens = 1000 * loads[w];
      if (allDead) c.workers[w].alive = false;
    }
    const auto name = policy.toStdString();
    const RouteDecision d = c.route(name);
    QCOMPARE(d.policy, name);
    QCOMPARE(d.lower_is_better, makePolicy(name)->lowerIsBetter());
    QCOMPARE(d.candidates.size(), std::size_t{5});
    std::set<WorkerId> seen;
    bool dead_seen = false;
    for (std::size_t i = 0; i < d.candidates.size(); ++i) {
      const auto& cand = d.candidates[i];
      seen.insert(cand.worker);
      QCOMPARE(cand.eligible, c.workers[cand.worker].alive);
      if (!cand.eligible) dead_seen = true;
      QVERIFY2(cand.eligible || dead_seen, "a dead worker ranks above a live one");
      QVERIFY2(!cand.eligible || !dead_seen, "a live worker ranks below a dead one");
      for (int k = 0; k < cand.num_components; ++k) QVERIFY(!std::isnan(cand.components[k].value));
      // Without affinity or sampling, the ranking follows the scores.
      if (i > 0 && cand.eligible) {
        const double prev = d.candidates[i - 1].score;
        QVERIFY2(d.lower_is_better ? prev <= cand.score : prev >= cand.score, "ranking contradicts scores");
      }
    }
    QCOMPARE(seen.size(), std::size_t{5});
    QCOMPARE(d.chosen, allDead ? kNoWorker : d.candidates.front().worker);
    QVERIFY(d.chosen != 0);
    // Deterministic: the same context gives the same decision.
    QCOMPARE(ranking(c.route(name)), ranking(d));
  }

  void linearRotatesOverAlive_data() {
    QTest::addColumn<qulonglong>("decisionIndex");
    QTest::addColumn<QList<int>>("expected");
    // Worker 2 is dead: a rotation starting on it moves on to 3, and it always ranks last.
    QTest::newRow("start 0") << 0ULL << QList<int>{0, 1, 3, 2};
    QTest::newRow("start 1") << 1ULL << QList<int>{1, 3, 0, 2};
    QTest::newRow("start on dead") << 2ULL << QList<int>{3, 0, 1, 2};
    QTest::newRow("start 3") << 3ULL << QList<int>{3, 0, 1, 2};
    QTest::newRow("wraps") << 9ULL << QList<int>{1, 3, 0, 2};
  }
  void linearRotatesOverAlive() {
    QFETCH(qulonglong, decisionIndex);
    QFETCH(QList<int>, expected);
    Cluster c(4);
    c.workers[2].alive = false;
    c.decision_index = decisionIndex;
    const auto d = c.route("linear");
    QCOMPARE(ranking(d), expected);
    QCOMPARE(d.chosen, expected.front());
    for (int i = 0; i < 4; ++i) QCOMPARE(d.candidates[i].score, double(i));
  }

  void lmetricScoresPrefillTimesBatch() {
    Cluster c(4);
    c.input_tokens = 230;  // 10 blocks of 24 = 240 > 230: a full match caches only the input
    c.holds(0, 5, 1);
    c.holds(2, 8, 1);
    c.holds(3, 10, 1);
    c.load(0, 2, 1);
    c.load(1, 1);
    c.load(2, 3, 1);
    c.load(3, 5);
    const auto d = c.route("lmetric");
    QCOMPARE(part(d, 0, "prefill_tokens"), 110.0);  // 230 - 5*24
    QCOMPARE(part(d, 0, "batch_size"), 3.0);
    QCOMPARE(of(d, 0).score, 330.0);
    QCOMPARE(of(d, 1).score, 230.0);              // 230 x 1
    QCOMPARE(of(d, 2).score, 152.0);              // (230 - 192) x 4
    QCOMPARE(part(d, 3, "prefill_tokens"), 0.0);  // never negative
    QCOMPARE(of(d, 3).score, 0.0);
    QCOMPARE(ranking(d), (QList<int>{3, 2, 1, 0}));
  }

  void lmetricAllIdleGoesToWorkerZero() {
    Cluster c(4);
    c.holds(2, 10, 1);  // even a full cache elsewhere does not beat the 0 x P tie
    auto d = c.route("lmetric");
    QCOMPARE(ranking(d), (QList<int>{0, 1, 2, 3}));
    for (const auto& cand : d.candidates) QCOMPARE(cand.score, 0.0);
    c.workers[0].alive = false;
    d = c.route("lmetric");
    QCOMPARE(d.chosen, 1);
  }

  void unifiedCostToTheNumber() {
    Cluster c(3, 14);
    c.block_size = 100;
    c.input_tokens = 1400;
    c.load(0, 2);
    c.workers[0].pending_prefill_tokens = 700;
    c.load(1, 0, 1);
    c.holds(1, 14, 1);
    c.load(2, 4);
    c.workers[2].pending_prefill_tokens = 1400;
    c.holds(2, 7, 1);
    const auto d = c.route("unified");
    QCOMPARE(part(d, 0, "contention_s"), 0.1);  // 2 x 0.05
    QCOMPARE(part(d, 0, "queue_s"), 0.1);       // 700 / 7000
    QCOMPARE(part(d, 0, "prefill_s"), 0.2);     // 1400 / 7000
    QCOMPARE(of(d, 0).score, 0.4);
    QCOMPARE(of(d, 1).score, 0.05);
    QCOMPARE(part(d, 2, "prefill_s"), 0.1);  // (1400 - 700) / 7000
    QCOMPARE(of(d, 2).score, 0.5);
    QCOMPARE(ranking(d), (QList<int>{1, 0, 2}));
    QCOMPARE(part(d, 0, "affinity"), 0.0);
    QCOMPARE(part(d, 0, "gate1"), 0.0);
  }

  void unifiedAffinityGates_data() {
    QTest::addColumn<int>("bound");
    QTest::addColumn<qint64>("ongoing0");
    QTest::addColumn<double>("gate1");
    QTest::addColumn<double>("gate2");
    QTest::addColumn<QList<int>>("expected");
    // Costs: w0 0.15, w1 0.10 (cheapest), w2 0.20 (= 2 x min), w3 0.30; w4 is dead with cost 0.
    QTest::newRow("both pass: affinity beats cheaper") << 0 << qint64{1000} << 1.0 << 1.0 << QList<int>{0, 1, 2, 3, 4};
    QTest::newRow("gate 2 at its bound passes") << 2 << qint64{1000} << 1.0 << 1.0 << QList<int>{2, 1, 0, 3, 4};
    // avg ongoing over alive = (9000 + 3 x 1000) / 4 = 3000; 9000 > 2 x 3000.
    QTest::newRow("gate 1 fails alone") << 0 << qint64{9000} << 0.0 << 1.0 << QList<int>{1, 0, 2, 3, 4};
    QTest::newRow("gate 2 fails alone") << 3 << qint64{1000} << 1.0 << 0.0 << QList<int>{1, 0, 2, 3, 4};
    QTest::newRow("no affinity") << int(kNoWorker) << qint64{1000} << 0.0 << 0.0 << QList<int>{1, 0, 2, 3, 4};
    QTest::newRow("affinity to dead") << 4 << qint64{1000} << 0.0 << 0.0 << QList<int>{1, 0, 2, 3, 4};
  }
  void unifiedAffinityGates() {
    QFETCH(int, bound);
    QFETCH(qint64, ongoing0);
    QFETCH(double, gate1);
    QFETCH(double, gate2);
    QFETCH(QList<int>, expected);
    Cluster c(5, 7);
    c.block_size = 100;
    c.input_tokens = 700;  // 0.1 s of new prefill where nothing is cached
    const int running[] = {1, 0, 2, 4, 0};
    for (int w = 0; w < 5; ++w) {
      c.load(w, running[w]);
      c.workers[w].ongoing_tokens = 1000;
    }
    c.workers[0].ongoing_tokens = ongoing0;
    c.workers[4].alive = false;
    c.workers[4].ongoing_tokens = 0;
    c.holds(4, 7, 1);
    c.bound = bound;
    const auto d = c.route("unified");
    QCOMPARE(ranking(d), expected);
    QCOMPARE(of(d, 0).score, 0.15);
    QCOMPARE(of(d, 4).score, 0.0);
    for (WorkerId w = 0; w < 5; ++w) {
      QCOMPARE(part(d, w, "affinity"), w == bound ? 1.0 : 0.0);
      QCOMPARE(part(d, w, "gate1"), w == bound ? gate1 : 0.0);
      QCOMPARE(part(d, w, "gate2"), w == bound ? gate2 : 0.0);
    }
  }

  // Session 1's request is 10 blocks. W0 holds its first 4 as boilerplate stored by session 2; w1
  // holds its first 8 from its own previous turn (so 4 shared + 4 exclusive).
  void kvAwareScores_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<int>("bound");
    QTest::addColumn<double>("k");
    QTest::addColumn<QList<double>>("overlap");
    QTest::addColumn<QList<double>>("floor");
    QTest::addColumn<QList<int>>("expected");
    // assigned = {3, 3, 1, 1}: mean 2, floor = K x (2 - assigned) / 2.
    QTest::newRow("sticky keeps its worker, no floor") << "kv-aware" << 1 << 200.0 << QList<double>{40, 80, 0, 0}
                                                       << QList<double>{0, 0, 0, 0} << QList<int>{1, 0, 2, 3};
    QTest::newRow("fresh gets K=200 floor") << "kv-aware" << int(kNoWorker) << 200.0 << QList<double>{40, 80, 0, 0}
                                            << QList<double>{0, 0, 100, 100} << QList<int>{2, 3, 1, 0};
    QTest::newRow("fresh K=0") << "kv-aware" << int(kNoWorker) << 0.0 << QList<double>{40, 80, 0, 0}
                               << QList<double>{0, 0, 0, 0} << QList<int>{1, 0, 2, 3};
    QTest::newRow("exclusive counts own blocks") << "exclusive-overlap" << int(kNoWorker) << 0.0
                                                 << QList<double>{0, 40, 0, 0} << QList<double>{0, 0, 0, 0}
                                                 << QList<int>{1, 2, 3, 0};
  }
  void kvAwareScores() {
    QFETCH(QString, policy);
    QFETCH(int, bound);
    QFETCH(double, k);
    QFETCH(QList<double>, overlap);
    QFETCH(QList<double>, floor);
    QFETCH(QList<int>, expected);
    Cluster c(4);
    c.holds(0, 4, 2);
    c.holds(1, 8, 1);
    const int assigned[] = {3, 3, 1, 1};
    for (int w = 0; w < 4; ++w) c.workers[w].assigned_sessions = assigned[w];
    c.bound = bound;
    QVERIFY(c.knob("K", k));
    const auto d = c.route(policy.toStdString());
    QCOMPARE(ranking(d), expected);
    for (WorkerId w = 0; w < 4; ++w) {
      const double sticky = w == bound ? 100.0 : 0.0;
      QCOMPARE(part(d, w, "overlap"), overlap[w]);
      QCOMPARE(part(d, w, "sticky"), sticky);
      QCOMPARE(part(d, w, "floor_bonus"), floor[w]);
      QCOMPARE(part(d, w, "assigned"), double(assigned[w]));
      QCOMPARE(of(d, w).score, overlap[w] + sticky + floor[w]);
    }
  }

  void kvAwareFloorBonusValues_data() {
    QTest::addColumn<QList<int>>("assigned");
    QTest::addColumn<QList<double>>("floor");
    QTest::newRow("mean 1.5") << QList<int>{3, 0, 1, 2} << QList<double>{0, 200, 200.0 / 3, 0};
    // Below one session per worker the deficit is not divided up: max(1, mean).
    QTest::newRow("mean 0.25") << QList<int>{1, 0, 0, 0} << QList<double>{0, 50, 50, 50};
  }
  void kvAwareFloorBonusValues() {
    QFETCH(QList<int>, assigned);
    QFETCH(QList<double>, floor);
    Cluster c(5);
    for (int w = 0; w < 4; ++w) c.workers[w].assigned_sessions = assigned[w];
    c.workers[4].alive = false;  // a dead worker does not pull the mean down
    QVERIFY(c.knob("K", 200));
    const auto d = c.route("kv-aware");
    for (WorkerId w = 0; w < 4; ++w) QCOMPARE(part(d, w, "floor_bonus"), floor[w]);
  }

  // A fresh session (3) whose prompt opens with boilerplate that session 2 left on w0.
  void boilerplatePullsOnlyWithoutFloor() {
    Cluster c(4);
    c.session = 3;
    c.holds(0, 4, 2);
    const int assigned[] = {3, 2, 1, 2};
    for (int w = 0; w < 4; ++w) c.workers[w].assigned_sessions = assigned[w];
    QVERIFY(c.knob("K", 0));
    auto d = c.route("kv-aware");
    QCOMPARE(d.chosen, 0);
    QCOMPARE(part(d, 0, "overlap"), 40.0);
    d = c.route("exclusive-overlap");
    QCOMPARE(part(d, 0, "overlap"), 0.0);
    QCOMPARE(ranking(d), (QList<int>{2, 1, 3, 0}));  // all 0: fewer assigned, then lower index
    QVERIFY(c.knob("K", 200));
    d = c.route("kv-aware");
    QCOMPARE(d.chosen, 2);  // 200 x (2 - 1) / 2 = 100 > 40
    QCOMPARE(of(d, 2).score, 100.0);
  }
  // sglang-cache-aware and dynamo-kv: tests/core/test_anchor_policies.cpp replays them against upstream.
};

QTEST_GUILESS_MAIN(TestPolicies)
#include "test_policies.moc"
