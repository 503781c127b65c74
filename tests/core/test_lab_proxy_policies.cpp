// The lab proxy's policies against hand-computed contexts, worked from its code, gahow/agentic-kvc
// scripts/cache_aware_proxy.py: linear's docstring @ ea5149726c and pick_instance @ 012d73f596;
// pick_lmetric in analysis/characterization/b3_policies_pseudocode.md @ 08530b3915;
// pick_instance_leastwork @ d9046322c6; leastwork_kappa's Settings @ a0db3cbe77;
// pick_instance_unified_hybrid's gates and tie-break order @ ac6534c3ff, lmetric_decode_weight @
// 8708b75520 (core/router/policies/*.h quote each). A wrong formula, tie-break or gate changes at
// least one exact number or ranking below.
#include <QtTest>

#include <cmath>

#include "core/router/policies/LeastWorkPolicy.h"
#include "core/router/policies/UnifiedGatedPolicy.h"
#include "tests/support/PolicyCluster.h"

using namespace kvscope;
using namespace kvscope::test;

class TestLabProxyPolicies : public QObject {
  Q_OBJECT
 private slots:
  // pick_lmetric: (pending_prefill_tokens + max(0, input - cache_hit)) x num_requests, the
  // proxy's own counters.
  void lmetricScoresPendingPlusNewTimesRequests() {
    Cluster c(4);
    c.input_tokens = 230;  // 10 blocks of 24 = 240 > 230: a full match caches only the input
    c.holds(0, 5, 1);
    c.holds(2, 8, 1);
    c.holds(3, 10, 1);
    c.inflight(0, 500, 60);
    c.inflight(0, 400, 40);
    c.inflight(0, 300, 0, true);  // past its first token: no pending prefill
    c.inflight(1, 300, 0, true);
    for (int i = 0; i < 4; ++i) c.inflight(2, 100, i == 0 ? 50 : 0, i > 0);
    for (int i = 0; i < 5; ++i) c.inflight(3, 100, 0, true);
    c.load(0, 9, 9);  // the engine's own batch is not what the proxy counts
    const auto d = c.route("lmetric");
    QCOMPARE(part(d, 0, "pending_prefill"), 100.0);
    QCOMPARE(part(d, 0, "new_uncached"), 110.0);  // 230 - 5*24
    QCOMPARE(part(d, 0, "num_requests"), 3.0);
    QCOMPARE(part(d, 0, "cache_hit"), 120.0);
    QCOMPARE(of(d, 0).score, 630.0);            // (100 + 110) x 3
    QCOMPARE(of(d, 1).score, 230.0);            // (0 + 230) x 1
    QCOMPARE(of(d, 2).score, 352.0);            // (50 + 230 - 192) x 4
    QCOMPARE(part(d, 3, "new_uncached"), 0.0);  // never negative
    QCOMPARE(of(d, 3).score, 0.0);
    QCOMPARE(ranking(d), (QList<int>{3, 1, 2, 0}));
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

  // The proxy's cache estimate (cache_view proxy-lru) replaces the engine's exact state.
  void cacheViewChangesTheHit() {
    Cluster c(3);
    c.holds(0, 10, 1);  // the engine holds the whole prompt on w0
    c.inflight(0, 100, 0, true);
    c.inflight(1, 100, 0, true);
    c.inflight(2, 100, 0, true);
    auto d = c.route("lmetric");
    QCOMPARE(d.chosen, 0);  // exact: (0 + 0) x 1
    c.proxy = {0, 240, 0};  // the proxy believes w1 has it
    d = c.route("lmetric");
    QCOMPARE(part(d, 0, "cache_hit"), 0.0);
    QCOMPARE(part(d, 1, "cache_hit"), 240.0);
    QCOMPARE(d.chosen, 1);
  }

  // The lab's linear: ongoing_tokens - 1.0 x cache_hit, minimum; turn 2+ stays on its affinity
  // unless ongoing_tokens > 2 x average, then the least loaded.
  void linearCacheAwareCost_data() {
    QTest::addColumn<double>("alpha");
    QTest::addColumn<int>("bound");
    QTest::addColumn<qint64>("ongoing0");
    QTest::addColumn<QList<double>>("scores");
    QTest::addColumn<int>("chosen");
    QTest::addColumn<double>("overloaded");
    // w0 holds all 240 tokens, w1 none, w2 120; ongoing w1 500, w2 400.
    QTest::newRow("turn 1: cost") << 1.0 << int(kNoWorker) << qint64{1000} << QList<double>{760, 500, 280} << 2 << 0.0;
    QTest::newRow("alpha 3") << 3.0 << int(kNoWorker) << qint64{1000} << QList<double>{280, 500, 40} << 2 << 0.0;
    // avg (1000 + 500 + 400) / 3 = 633.3; 1000 <= 1266.7: the affinity holds.
    QTest::newRow("affinity kept") << 1.0 << 0 << qint64{1000} << QList<double>{760, 500, 280} << 0 << 0.0;
    // avg 1300; 3000 > 2600: overloaded, so the fewest ongoing tokens (w2), not the best score.
    QTest::newRow("overload break") << 1.0 << 0 << qint64{3000} << QList<double>{2760, 500, 280} << 2 << 1.0;
  }
  void linearCacheAwareCost() {
    QFETCH(double, alpha);
    QFETCH(int, bound);
    QFETCH(qint64, ongoing0);
    QFETCH(QList<double>, scores);
    QFETCH(int, chosen);
    QFETCH(double, overloaded);
    Cluster c(3);
    c.holds(0, 10, 1);
    c.holds(2, 5, 1);
    c.inflight(0, ongoing0, 0, true);
    c.inflight(1, 500, 0, true);
    c.inflight(2, 400, 400);
    c.bound = bound;
    QVERIFY(c.knob("linear_cache_alpha", alpha));
    const auto d = c.route("linear");
    for (WorkerId w = 0; w < 3; ++w) QCOMPARE(of(d, w).score, scores[w]);
    QCOMPARE(part(d, 0, "cache_hit"), 240.0);
    QCOMPARE(part(d, 2, "ongoing_tokens"), 400.0);
    QCOMPARE(d.chosen, chosen);
    QCOMPARE(part(d, 0, "overloaded"), overloaded);
    QCOMPARE(part(d, 0, "affinity"), bound == 0 ? 1.0 : 0.0);
  }

  // LPWL: pending_prefill + new_uncached, minimum; ties to fewest num_requests, then round-robin.
  void leastworkTieBreaks() {
    Cluster c(4);
    c.holds(0, 10, 1);
    c.holds(1, 10, 1);
    c.holds(2, 6, 1);  // new 240 - 144 = 96
    c.inflight(0, 300, 100);
    c.inflight(0, 200, 0, true);    // w0: 100 + 0 with 2 requests
    c.inflight(1, 300, 100);        // w1: 100 + 0 with 1
    c.inflight(2, 50, 4);           // w2: 4 + 96 with 1
    LeastWorkPolicy policy(false);  // one object: the round-robin counter is its state
    auto d = c.route(policy);
    QCOMPARE(of(d, 0).score, 100.0);
    QCOMPARE(of(d, 1).score, 100.0);
    QCOMPARE(of(d, 2).score, 100.0);
    QCOMPARE(of(d, 3).score, 240.0);  // nothing cached, nothing pending, no requests: still worse
    QCOMPARE(d.chosen, 1);            // w1 and w2 tie on (100, 1 request): tied[0]
    QCOMPARE(c.route(policy).chosen, 2);
    QCOMPARE(c.route(policy).chosen, 1);
    QCOMPARE(ranking(c.route(policy)), (QList<int>{2, 0, 1, 3}));
  }

  void leastworkKappaTaxesDecodeLoad() {
    Cluster c(2);
    c.holds(0, 10, 1);
    c.holds(1, 10, 1);
    c.inflight(0, 300, 100);
    c.inflight(0, 200, 0, true);  // 200 decode tokens on w0
    c.inflight(1, 100, 100);
    c.inflight(1, 100, 0);  // w1: 100 pending, nothing decoding
    auto d = c.route("leastwork-kappa");
    QCOMPARE(part(d, 0, "ongoing_decode"), 200.0);
    QCOMPARE(of(d, 0).score, 100.0 * (1 + 2.5e-6 * 200));
    QCOMPARE(of(d, 1).score, 100.0);
    QCOMPARE(d.chosen, 1);
    QVERIFY(c.knob("leastwork_kappa", 0));
    d = c.route("leastwork-kappa");
    QCOMPARE(of(d, 0).score, 100.0);
    QCOMPARE(d.chosen, 0);  // equal scores and requests (2 each): a fresh policy's round-robin starts at tied[0]
  }

  // pick_instance_unified_hybrid: the affinity stays while cache_ratio > 0.5 and num_requests <=
  // avg x overload_factor; else the LMetric fallback with its tie-breaks.
  void unifiedGatedGates_data() {
    QTest::addColumn<int>("bound");
    QTest::addColumn<int>("boundRequests");
    QTest::addColumn<double>("decision");
    QTest::addColumn<double>("ratio");
    QTest::addColumn<int>("chosen");
    // Requests: w0 1, w2 1, w3 0, w1 as given; w1 holds all 10 blocks, w2 half (ratio 0.5).
    QTest::newRow("kept: ratio 1, 2 <= 1 x 2") << 1 << 2 << 1.0 << 1.0 << 1;
    QTest::newRow("overload: 3 > 1.25 x 2") << 1 << 3 << 0.0 << 1.0 << 3;
    QTest::newRow("low cache: 0.5 is not > 0.5") << 2 << 2 << 0.0 << 0.5 << 3;
    QTest::newRow("no affinity") << int(kNoWorker) << 2 << 0.0 << 0.0 << 3;
  }
  void unifiedGatedGates() {
    QFETCH(int, bound);
    QFETCH(int, boundRequests);
    QFETCH(double, decision);
    QFETCH(double, ratio);
    QFETCH(int, chosen);
    Cluster c(4);
    c.holds(1, 10, 1);
    c.holds(2, 5, 1);
    c.inflight(0, 100, 0, true);
    c.inflight(2, 100, 0, true);
    for (int i = 0; i < boundRequests; ++i) c.inflight(1, 100, 50);  // pending: a fallback never picks w1
    c.bound = bound;
    const auto d = c.route("unified-gated");
    QCOMPARE(d.field("decision"), decision);
    QCOMPARE(d.field("affinity"), double(bound));
    QCOMPARE(d.field("cache_ratio"), ratio);
    QCOMPARE(d.chosen, chosen);
    QCOMPARE(of(d, 3).score, 0.0);    // w3 has no requests: LMetric's 0
    QCOMPARE(of(d, 0).score, 240.0);  // (0 + 240) x 1
  }

  void unifiedGatedTieBreakOrder() {
    Cluster c(4);
    c.holds(1, 10, 1);
    c.holds(2, 5, 1);
    UnifiedGatedPolicy policy;
    // Every instance idle: every fallback score is 0; new_uncached decides (w1 has it all).
    auto d = c.route(policy);
    QCOMPARE(d.chosen, 1);
    QCOMPARE(d.field("tie_break"), 1.0);
    QCOMPARE(d.field("avg_num_requests"), 0.0);
    // w3 holds it too: equal on score, new_uncached and num_requests -> round-robin w1, w3, w1.
    c.holds(3, 10, 1);
    d = c.route(policy);
    QCOMPARE(d.field("tie_break"), 3.0);
    QCOMPARE(d.chosen, 1);
    QCOMPARE(c.route(policy).chosen, 3);
    QCOMPARE(c.route(policy).chosen, 1);
    // One request on w1: scores still 0 x ... = 0 (w1: (0 + 0) x 1); num_requests breaks it for w3.
    c.inflight(1, 100, 0, true);
    d = c.route(policy);
    QCOMPARE(d.chosen, 3);
    QCOMPARE(d.field("tie_break"), 2.0);
  }

  void unifiedGatedDecodeWeight() {
    Cluster c(2);
    c.holds(0, 10, 1);
    c.holds(1, 10, 1);
    c.inflight(0, 1000, 0, true);  // w0: 1000 decode tokens, 1 request
    QVERIFY(c.knob("lmetric_decode_weight", 0.01));
    const auto d = c.route("unified-gated");
    // (0 + 0) x max(1, 1) + 0.01 x 1000 = 10; w1: (0 + 0) x max(0, 1) + 0 = 0.
    QCOMPARE(of(d, 0).score, 10.0);
    QCOMPARE(of(d, 1).score, 0.0);
    QCOMPARE(d.chosen, 1);
  }

  void stickyHoldsItsInstance() {
    Cluster c(3);
    c.holds(0, 10, 1);
    for (int i = 0; i < 5; ++i) c.inflight(2, 1000, 1000);  // w2 is swamped
    c.inflight(1, 100, 0, true);
    c.bound = 2;
    auto d = c.route("sticky");
    QCOMPARE(d.chosen, 2);
    c.bound = kNoWorker;  // a first turn: placed by LMetric (w0: 0 requests -> 0)
    d = c.route("sticky");
    QCOMPARE(d.chosen, 0);
    c.workers[2].alive = false;  // an affinity to a dead instance is no affinity
    c.bound = 2;
    QCOMPARE(c.route("sticky").chosen, 0);
  }

  void loadOnlyIgnoresTheCache() {
    Cluster c(3);
    c.holds(0, 10, 1);
    c.inflight(0, 100, 0, true);
    c.inflight(1, 100, 0, true);
    c.inflight(2, 100, 40);
    const auto d = c.route("load-only");
    QCOMPARE(of(d, 0).score, 240.0);  // (0 + 240) x 1, the cached prompt counted in full
    QCOMPARE(of(d, 2).score, 280.0);
    QCOMPARE(d.chosen, 0);  // a tie with w1: the lowest index
    QCOMPARE(ranking(d), (QList<int>{0, 1, 2}));
  }

  void kvAwareColdDBonus() {
    Cluster c(4);
    const int assigned[] = {3, 3, 0, 1};  // sessions ever assigned: w2 never had one
    for (int w = 0; w < 4; ++w) c.workers[w].assignments = assigned[w];
    c.holds(0, 4, 2);  // boilerplate: 4 blocks
    QVERIFY(c.knob("cold_d_bonus", 50));
    auto d = c.route("kv-aware");
    QCOMPARE(part(d, 2, "cold_bonus"), 50.0);
    QCOMPARE(part(d, 3, "cold_bonus"), 0.0);
    QCOMPARE(d.chosen, 2);  // 50 > 4
    c.bound = 0;            // a sticky session takes no bonus
    d = c.route("kv-aware");
    QCOMPARE(part(d, 2, "cold_bonus"), 0.0);
    QCOMPARE(d.chosen, 0);
  }
};

QTEST_GUILESS_MAIN(TestLabProxyPolicies)
#include "test_lab_proxy_policies.moc"
