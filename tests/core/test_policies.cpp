// Every routing policy against hand-computed contexts: a wrong formula, unit, tie-break or gate
// changes at least one exact number or ranking below (the lab proxy's own policies:
// test_lab_proxy_policies.cpp).
#include <QtTest>

#include <cmath>
#include <set>

#include "tests/support/PolicyCluster.h"

using namespace kvscope;
using namespace kvscope::test;

class TestPolicies : public QObject {
  Q_OBJECT
 private slots:
  void factoryKnowsEveryName() {
    QCOMPARE(policyNames().size(), std::size_t{13});
    std::set<std::string_view> names;
    for (const PolicySpec* spec : policySpecs()) {
      auto p = makePolicy(spec->name);
      QVERIFY(p != nullptr);
      QCOMPARE(p->name(), spec->name);
      QCOMPARE(&p->spec(), spec);
      QVERIFY2(!spec->description.empty() && !spec->origin.empty() && !spec->tie_break.empty(), spec->name.data());
      QVERIFY2(names.insert(spec->name).second, "a name is registered twice");
      for (KnobId k : spec->knobs) {
        QVERIFY(KnobRegistry::spec(k).scope == KnobScope::Policy);
        QVERIFY(spec->reads(k));
      }
      QVERIFY(spec->reads(KnobId::Rho));  // shared knobs apply under every policy
    }
    for (const auto& name :
         {"linear", "lmetric", "unified", "unified-gated", "leastwork", "leastwork-kappa", "sticky", "load-only",
          "round-robin", "kv-aware", "exclusive-overlap", "sglang-cache-aware", "dynamo-kv"})
      QVERIFY2(findPolicy(name), name);
    QVERIFY(makePolicy("no-such-policy") == nullptr);
    // Every policy knob is read by some policy, and "unified" is not mistaken for "unified-gated".
    for (const KnobSpec& k : KnobRegistry::specs())
      if (k.scope == KnobScope::Policy) QVERIFY2(!policiesReading(k.id).empty(), k.name.data());
    const auto gate = policiesReading(KnobId::CacheRatioGate);
    QCOMPARE(gate.size(), std::size_t{1});
    QCOMPARE(gate.front(), std::string_view("unified-gated"));
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

  void roundRobinRotatesOverAlive_data() {
    QTest::addColumn<qulonglong>("decisionIndex");
    QTest::addColumn<QList<int>>("expected");
    // Worker 2 is dead: a rotation starting on it moves on to 3, and it always ranks last.
    QTest::newRow("start 0") << 0ULL << QList<int>{0, 1, 3, 2};
    QTest::newRow("start 1") << 1ULL << QList<int>{1, 3, 0, 2};
    QTest::newRow("start on dead") << 2ULL << QList<int>{3, 0, 1, 2};
    QTest::newRow("start 3") << 3ULL << QList<int>{3, 0, 1, 2};
    QTest::newRow("wraps") << 9ULL << QList<int>{1, 3, 0, 2};
  }
  void roundRobinRotatesOverAlive() {
    QFETCH(qulonglong, decisionIndex);
    QFETCH(QList<int>, expected);
    Cluster c(4);
    c.workers[2].alive = false;
    c.decision_index = decisionIndex;
    const auto d = c.route("round-robin");
    QCOMPARE(ranking(d), expected);
    QCOMPARE(d.chosen, expected.front());
    for (int i = 0; i < 4; ++i) QCOMPARE(d.candidates[i].score, double(i));
  }

  // Seed 004's additive Unified, on the proxy's counters.
  void unifiedCostToTheNumber() {
    Cluster c(3, 14);
    c.block_size = 100;
    c.input_tokens = 1400;
    c.inflight(0, 2000, 700);
    c.inflight(0, 1000, 0, true);
    c.inflight(1, 500, 0, true);
    c.holds(1, 14, 1);
    for (int i = 0; i < 4; ++i) c.inflight(2, 1000, i < 2 ? 700 : 0, i >= 2);
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
    // Ongoing tokens: w0 as given, w1 0, w2 and w3 1000; the average over the four alive.
    QTest::newRow("both pass: affinity beats cheaper") << 0 << qint64{1000} << 1.0 << 1.0 << QList<int>{0, 1, 2, 3, 4};
    QTest::newRow("gate 2 at its bound passes") << 2 << qint64{1000} << 1.0 << 1.0 << QList<int>{2, 1, 0, 3, 4};
    // avg ongoing = (9000 + 0 + 1000 + 1000) / 4 = 2750; 9000 > 2 x 2750.
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
    c.inflight(0, ongoing0, 0, true);
    for (int i = 0; i < 2; ++i) c.inflight(2, 500, 0, true);
    for (int i = 0; i < 4; ++i) c.inflight(3, 250, 0, true);
    c.workers[4].alive = false;
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
  // holds its first 8 from its own previous turn (so 4 shared + 4 exclusive). Overlap is in blocks.
  void kvAwareScores_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<int>("bound");
    QTest::addColumn<double>("k");
    QTest::addColumn<QList<double>>("overlap");
    QTest::addColumn<QList<double>>("floor");
    QTest::addColumn<QList<int>>("expected");
    // assigned = {3, 3, 1, 1}: mean 2, floor = int(K x (2 - assigned) / 2).
    QTest::newRow("sticky keeps its worker, no floor")
        << "kv-aware" << 1 << 200.0 << QList<double>{4, 8, 0, 0} << QList<double>{0, 0, 0, 0} << QList<int>{1, 0, 2, 3};
    QTest::newRow("fresh gets K=200 floor") << "kv-aware" << int(kNoWorker) << 200.0 << QList<double>{4, 8, 0, 0}
                                            << QList<double>{0, 0, 100, 100} << QList<int>{2, 3, 1, 0};
    QTest::newRow("fresh K=0") << "kv-aware" << int(kNoWorker) << 0.0 << QList<double>{4, 8, 0, 0}
                               << QList<double>{0, 0, 0, 0} << QList<int>{1, 0, 2, 3};
    QTest::newRow("exclusive counts own blocks")
        << "exclusive-overlap" << int(kNoWorker) << 0.0 << QList<double>{0, 4, 0, 0} << QList<double>{0, 0, 0, 0}
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
    for (int w = 0; w < 4; ++w) c.workers[w].assignments = assigned[w];
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
    // The lab's "load_floor proportional to deficit (200/100/0 at 0/50/100% load)": mean 2.
    QTest::newRow("0/50/100/250% of the mean") << QList<int>{0, 1, 2, 5} << QList<double>{200, 100, 0, 0};
    QTest::newRow("mean 1.5") << QList<int>{3, 0, 1, 2} << QList<double>{0, 200, 66, 0};
    // Below one session per worker the deficit is not divided up: max(1, mean).
    QTest::newRow("mean 0.25") << QList<int>{1, 0, 0, 0} << QList<double>{0, 50, 50, 50};
    // "load_floor zero during warmup (mean=0)".
    QTest::newRow("warm-up") << QList<int>{0, 0, 0, 0} << QList<double>{0, 0, 0, 0};
  }
  void kvAwareFloorBonusValues() {
    QFETCH(QList<int>, assigned);
    QFETCH(QList<double>, floor);
    Cluster c(5);
    for (int w = 0; w < 4; ++w) c.workers[w].assignments = assigned[w];
    c.workers[4].alive = false;  // a dead worker does not pull the mean down
    QVERIFY(c.knob("K", 200));
    const auto d = c.route("kv-aware");
    for (WorkerId w = 0; w < 4; ++w) QCOMPARE(part(d, w, "floor_bonus"), floor[w]);
  }

  // The lab's score_candidate tests (agentic-pd-hybrid tests/test_policy_scoring.py @ 110bd680, as its
  // commit a785b83 lists them), on a 3-D cluster: each checks one position of the 4-tuple
  // (overlap + sticky_bonus x sticky + floor, sticky, -inflight, -assigned).
  void kvAwareLabForm() {
    {  // "primary term: overlap dominates pure sticky": 5 blocks beat the sticky bonus of 1.
      Cluster c(3);
      QVERIFY(c.knob("sticky_bonus", 1));
      c.holds(0, 5, 2);
      c.bound = 1;
      QCOMPARE(c.route("kv-aware").chosen, 0);
    }
    {  // "strict lex order: sticky wins position-1 over fresh-idle": equal primary terms.
      Cluster c(3);
      QVERIFY(c.knob("sticky_bonus", 1));
      c.holds(0, 1, 2);  // w0: overlap 1, idle; w2: sticky bonus 1, busier
      c.bound = 2;
      c.inflight(2, 100, 0);
      const auto d = c.route("kv-aware");
      QCOMPARE(of(d, 0).score, of(d, 2).score);
      QCOMPARE(d.chosen, 2);
    }
    {  // "tie-2 inflight: lower wins", then "tie-3 assigned: lower wins", then index order.
      Cluster c(3);
      c.inflight(0, 100, 0);
      c.workers[1].assignments = 2;
      QCOMPARE(ranking(c.route("kv-aware")), (QList<int>{2, 1, 0}));
      c.workers[2].assignments = 3;
      QCOMPARE(ranking(c.route("kv-aware")), (QList<int>{1, 2, 0}));
    }
    {  // "load_floor gated off when sticky=True" and "does not underflow when overloaded".
      Cluster c(3);
      QVERIFY(c.knob("K", 200));
      c.workers[0].assignments = 9;
      c.bound = 1;
      auto d = c.route("kv-aware");
      for (WorkerId w = 0; w < 3; ++w) QCOMPARE(part(d, w, "floor_bonus"), 0.0);
      c.bound = kNoWorker;
      d = c.route("kv-aware");
      QCOMPARE(part(d, 0, "floor_bonus"), 0.0);  // 9 against a mean of 3: no negative floor
      QCOMPARE(part(d, 1, "floor_bonus"), 200.0);
    }
    {  // "load_floor disabled by default".
      Cluster c(3);
      c.workers[0].assignments = 6;
      QCOMPARE(part(c.route("kv-aware"), 1, "floor_bonus"), 0.0);
    }
  }

  // "boilerplate overlap loses to load_floor on cold D" and "real per-session overlap beats load_floor
  // on warm D": the Inferact boilerplate is ~50 24-token blocks (786cbb8); a session's own history is
  // hundreds of blocks.
  void boilerplateLosesToTheFloorHistoryDoesNot() {
    Cluster c(3, 400);
    c.session = 3;
    c.holds(0, 50, 2);  // boilerplate that session 2 left on w0
    c.workers[0].assignments = 4;
    c.workers[1].assignments = 4;  // w2 never assigned: mean 8/3
    QVERIFY(c.knob("K", 0));
    auto d = c.route("kv-aware");
    QCOMPARE(d.chosen, 0);
    QCOMPARE(part(d, 0, "overlap"), 50.0);
    d = c.route("exclusive-overlap");
    QCOMPARE(part(d, 0, "overlap"), 0.0);
    QVERIFY(c.knob("K", 200));
    d = c.route("kv-aware");
    QCOMPARE(d.chosen, 2);            // int(200 x (8/3) / (8/3)) > 50
    QCOMPARE(of(d, 2).score, 199.0);  // 199.99999999999997 in doubles, truncated as Python's int() does
    c.holds(1, 300, 3);               // w1 holds 300 blocks of this session's own history
    QCOMPARE(c.route("kv-aware").chosen, 1);
  }

  // What the router sent to a worker and has not yet seen land counts as overlap there: the first
  // turns of a burst decided before any seed lands follow the first one, not -inflight's rotation.
  void routedBlocksCountAsOverlap() {
    Cluster c(3, 60);
    const std::vector<BlockHash> first(c.hashes.begin(), c.hashes.begin() + 50);  // another session's prompt
    c.active.setCountingBlocks(true);
    c.active.add(90, 0, first, 1200, 1200);
    const auto d = c.route("kv-aware");
    QCOMPARE(part(d, 0, "overlap"), 50.0);
    QCOMPARE(part(d, 0, "inflight"), 1.0);
    QCOMPARE(d.chosen, 0);
  }
  // sglang-cache-aware and dynamo-kv: tests/core/test_anchor_policies.cpp replays them against upstream.
};

QTEST_GUILESS_MAIN(TestPolicies)
#include "test_policies.moc"
