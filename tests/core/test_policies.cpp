// Every routing policy against hand-computed contexts: a wrong formula, unit, tie-break or gate
// changes at least one exact number or ranking below. The lab's proxy policies are worked from its
// code, gahow/agentic-kvc scripts/cache_aware_proxy.py: linear's docstring @ ea5149726c and
// pick_instance @ 012d73f596; pick_lmetric in analysis/characterization/b3_policies_pseudocode.md
// @ 08530b3915; pick_instance_leastwork @ d9046322c6; leastwork_kappa's Settings @ a0db3cbe77;
// pick_instance_unified_hybrid's gates and tie-break order @ ac6534c3ff, lmetric_decode_weight @
// 8708b75520 (core/router/policies/*.h quote each).
#include <QtTest>

#include <cmath>
#include <map>
#include <set>

#include "core/router/ActiveSequences.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/router/policies/LeastWorkPolicy.h"
#include "core/router/policies/UnifiedGatedPolicy.h"

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
  ActiveSequences active;             // the router's (and the lab proxy's) counters
  std::vector<std::int64_t> proxy;    // cache hits as the proxy LRU estimates them (empty: exact)
  RequestId next_request = 100;

  explicit Cluster(int n, int blocks = 10) : workers(static_cast<std::size_t>(n)), active(n) {
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
  // A request the router sent to `w`: `input` tokens, `uncached` of them still to prefill until
  // its first token (`started`: past it).
  void inflight(WorkerId w, std::int64_t input, std::int64_t uncached, bool started = false) {
    const RequestId id = next_request++;
    active.add(id, w, {}, uncached, input);
    if (started) active.prefillDone(id);
  }
  RouteDecision route(std::string_view policy) const {
    auto p = makePolicy(policy);
    return route(*p);
  }
  RouteDecision route(const RoutingPolicy& policy) const {
    PrefixIndex::Match m;
    index.match(hashes, session, static_cast<int>(workers.size()), m);
    const RouteRequest req{7, session, 1, input_tokens, hashes};
    RouteContext ctx{req, workers, m, block_size, bound, knobs, decision_index, uniform};
    ctx.active = &active;
    ctx.proxy_cached = proxy;
    RouteDecision d;
    policy.decide(ctx, d);
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
    for (const auto& name : {"linear", "lmetric", "unified", "unified-gated", "leastwork", "leastwork-kappa", "sticky",
                             "load-only", "round-robin", "kv-aware", "exclusive-overlap", "sglang-cache-aware", "dynamo-kv"})
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
    QCOMPARE(of(d, 0).score, 630.0);              // (100 + 110) x 3
    QCOMPARE(of(d, 1).score, 230.0);              // (0 + 230) x 1
    QCOMPARE(of(d, 2).score, 352.0);              // (50 + 230 - 192) x 4
    QCOMPARE(part(d, 3, "new_uncached"), 0.0);    // never negative
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
    c.holds(2, 6, 1);               // new 240 - 144 = 96
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
    c.inflight(1, 100, 0);        // w1: 100 pending, nothing decoding
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
    const int assigned[] = {3, 3, 0, 1};
    for (int w = 0; w < 4; ++w) c.workers[w].assigned_sessions = assigned[w];
    c.holds(0, 4, 2);  // boilerplate: 40
    QVERIFY(c.knob("cold_d_bonus", 50));
    auto d = c.route("kv-aware");
    QCOMPARE(part(d, 2, "cold_bonus"), 50.0);
    QCOMPARE(part(d, 3, "cold_bonus"), 0.0);
    QCOMPARE(d.chosen, 2);  // 50 > 40
    c.bound = 0;            // a sticky session takes no bonus
    d = c.route("kv-aware");
    QCOMPARE(part(d, 2, "cold_bonus"), 0.0);
    QCOMPARE(d.chosen, 0);
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
