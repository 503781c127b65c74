// The anchors' policies as upstream runs them. Each test replays a fixed
// request sequence; every expected choice below was worked out by hand from the upstream code:
//  - dynamo-kv: ai-dynamo/dynamo lib/llm/src/kv_router/scheduler.rs @ db19bd2a659d4cb04998fb4101cd0dbfbbeba9d4
//    (DefaultWorkerSelector::select_worker, softmax_sample) and lib/llm/src/kv_router/sequence.rs @
//    581ee33e434f3f99b84f6ea99fcf0a3fda26a685 (ActiveSequences: new_tokens, new_blocks,
//    potential_blocks_and_tokens); the newer form from lib/kv-router/src/scheduling/selector/default.rs
//    @ a4bdb9bfa1eed0afd4d67331f0938f9d5e3b58ed (worker_logit).
//  - sglang-cache-aware: sgl-project/sglang sgl-router/src/policies/cache_aware.rs @
//    b6f20641ad6bafc1278db74d1e13b0e9da47bd64 (select_worker) and sgl-router/src/policies/tree.rs @
//    4d40eec0266be06d0e65b919457691cab9e51547 (insert, prefix_match, get_smallest_tenant,
//    evict_tenant_by_size); defaults from sgl-router/py_src/sglang_router/router_args.py @
//    e46dcd87adca58ec70831ad7cb01a3892b2c9e50.
#include <QtTest>

#include "core/router/ApproxRadixTree.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"

using namespace kvscope;

namespace {

// The router's state around a policy, driven by hand: what it tracks (ActiveSequences), what its
// indexer holds (KV events), the loads it sees.
struct Replay {
  int block_size = 4;
  std::vector<WorkerLoad> loads;
  PrefixIndex index;
  ActiveSequences active;
  std::vector<std::int64_t> tree;
  KnobRegistry knobs;
  std::unique_ptr<RoutingPolicy> policy;
  bool disaggregated = false;

  Replay(std::string_view name, int n)
      : loads(static_cast<std::size_t>(n)), active(n), tree(static_cast<std::size_t>(n), 0), policy(makePolicy(name)) {}
  bool knob(const char* name, double v) { return knobs.apply({{name, v}}, "test").ok; }
  // One decision; the router then tracks the request on the chosen worker.
  RouteDecision route(RequestId id, std::vector<BlockHash> hashes, double uniform = 0, SimTime now = 0) {
    PrefixIndex::Match m;
    index.match(hashes, 1, static_cast<int>(loads.size()), m);
    const RouteRequest req{id, 1, 1, static_cast<std::int32_t>(hashes.size()) * block_size, hashes, now};
    RouteContext ctx{req, loads, m, block_size, kNoWorker, knobs, 0, uniform, nullptr, {}, true, {}};
    ctx.active = &active;
    ctx.tree_blocks = tree;
    ctx.disaggregated = disaggregated;
    RouteDecision d;
    policy->decide(ctx, d);
    if (d.chosen != kNoWorker) {
      policy->routed(ctx, d.chosen);
      const std::int64_t cached = std::int64_t{m.prefix_blocks[static_cast<std::size_t>(d.chosen)]} * block_size;
      active.add(id, d.chosen, hashes, req.input_tokens - cached);
    }
    return d;
  }
  void stored(WorkerId w, std::vector<BlockHash> hashes) {
    tree[w] += static_cast<std::int64_t>(index.stored(w, 1, hashes));
  }
};

double part(const RouteDecision& d, WorkerId w, const char* name) {
  for (const auto& c : d.candidates)
    if (c.worker == w) return c.component(name);
  return NAN;
}

}  // namespace

class TestAnchorPolicies : public QObject {
  Q_OBJECT
 private slots:
  // Aggregated serving, overlap_score_weight 1, temperature 0, block size 4:
  // logit = (new tokens + tracked unprefilled tokens) / 4 + (tracked blocks + this prompt's blocks
  // they lack).
  void dynamoReplay() {
    Replay r("dynamo-kv", 3);
    // 1. {1,2,3,4}: every worker 16/4 + 4 = 8; tied, equal trees -> uniform draw 0.5 of 3 -> index 1.
    auto d = r.route(1, {1, 2, 3, 4}, 0.5);
    QCOMPARE(d.chosen, 1);
    for (WorkerId w = 0; w < 3; ++w) QCOMPARE(d.candidates[static_cast<std::size_t>(w)].score, 8.0);
    // 2. {1..6}: w0 24/4 + 6 = 12; w1 (24 + R1's 16 unprefilled)/4 + (4 tracked + 2 new) = 16; w2 12.
    //    Tied w0, w2 with equal trees -> draw 0.0 -> w0.
    d = r.route(2, {1, 2, 3, 4, 5, 6}, 0.0);
    QCOMPARE(d.chosen, 0);
    QCOMPARE(part(d, 1, "prefill_blocks"), 10.0);
    QCOMPARE(part(d, 1, "decode_blocks"), 6.0);
    // R1 prefilled on w1; its KV lands in w1's cache (KV event).
    r.active.prefillDone(1);
    r.stored(1, {1, 2, 3, 4});
    // 3. {1,2,3,4,7}: w0 (20 + 24)/4 + (6 + 1) = 18; w1 (20 - 16)/4 + (4 + 1) = 6; w2 20/4 + 5 = 10 -> w1.
    d = r.route(3, {1, 2, 3, 4, 7}, 0.9);
    QCOMPARE(d.chosen, 1);
    QCOMPARE(d.candidates[0].score, 6.0);
    QCOMPARE(part(d, 0, "decode_blocks"), 7.0);
    QCOMPARE(part(d, 2, "prefill_blocks"), 5.0);
    // R2 finishes on w0: the router stops counting it, though w0 keeps its blocks cached.
    r.active.free(2);
    r.stored(0, {1, 2, 3, 4, 5, 6});
    // 4. {9,10}: w0 8/4 + 2 = 4; w1 (8 + R3's 4)/4 + (5 + 2) = 10; w2 4. Tied w0 (tree 6 blocks),
    //    w2 (tree 0): the smaller tree wins whatever the draw.
    d = r.route(4, {9, 10}, 0.0);
    QCOMPARE(d.chosen, 2);
    QCOMPARE(part(d, 0, "tree_blocks"), 6.0);
  }

  // Disaggregated serving: the decode router runs with overlap_score_weight 0 - by load alone.
  void dynamoDecodeRouterIgnoresOverlap() {
    Replay r("dynamo-kv", 3);
    r.disaggregated = true;
    r.stored(1, {1, 2, 3, 4});
    r.stored(2, {50});
    r.active.add(100, 0, std::vector<BlockHash>{60, 61, 62}, 12);
    // {1,2,3,4,7}: w0 3 + 5 = 8, w1 0 + 5 = 5 (its 4 cached blocks earn nothing), w2 5; tie w1 (tree 4) / w2 (tree 1)
    // -> w2.
    const auto d = r.route(1, {1, 2, 3, 4, 7}, 0.0);
    QCOMPARE(d.chosen, 2);
    QCOMPARE(part(d, 1, "decode_blocks"), 5.0);
    QCOMPARE(d.candidates[0].score, 5.0);
    QCOMPARE(part(d, 0, "decode_blocks"), 8.0);
  }

  // The newer cost form: prefill_load_scale x max(0, raw - credit x overlap) + decode + weight x requests.
  void dynamoNewerForm() {
    Replay r("dynamo-kv", 3);
    QVERIFY(r.knob("dynamo_cost_form", 1));
    r.active.add(100, 0, std::vector<BlockHash>{1, 2, 3, 4, 5, 6}, 24);  // as after step 2 above
    r.active.add(101, 1, std::vector<BlockHash>{1, 2, 3, 4}, 16);
    r.active.prefillDone(101);
    r.stored(1, {1, 2, 3, 4});
    // {1,2,3,4,7}: w0 (20+24)/4 + 7 = 18; w1 max(0, 5 - 4) + 5 = 6; w2 5 + 5 = 10 -> w1.
    auto d = r.route(1, {1, 2, 3, 4, 7});
    QCOMPARE(d.chosen, 1);
    QCOMPARE(d.candidates[0].score, 6.0);
    r.active.free(1);
    // One tracked request costs 10 blocks: w0 28, w1 16, w2 10 -> w2.
    QVERIFY(r.knob("decode_active_request_weight", 10));
    d = r.route(2, {1, 2, 3, 4, 7});
    QCOMPARE(d.chosen, 2);
    QCOMPARE(part(d, 1, "prefill_blocks"), 1.0);
  }

  // cache_threshold 0.3, balance thresholds 64 / 1.5 (router_args.py defaults); prompts of blocks.
  void sglangReplay() {
    Replay r("sglang-cache-aware", 3);
    const std::vector<BlockHash> A{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    // 1. Empty tree: rate 0 -> smallest tenant, all 0 -> w0. Tree: w0 10.
    QCOMPARE(r.route(1, A).chosen, 0);
    // 2. Matches 6 of 10 along A's path, node tenants [w0]: 0.6 > 0.3 -> w0. w0 14.
    auto d = r.route(2, {1, 2, 3, 4, 5, 6, 20, 21, 22, 23});
    QCOMPARE(d.chosen, 0);
    QCOMPARE(part(d, 0, "tree_match_rate"), 0.6);
    // 3. No match: smallest tenant, w1 and w2 at 0 -> w1. w1 10.
    QCOMPARE(r.route(3, {30, 31, 32, 33, 34, 35, 36, 37, 38, 39}).chosen, 1);
    // 4. Matches {1,2}: 0.2 <= 0.3 -> smallest tenant w2 (0), though w0 holds the prefix. w2 10.
    d = r.route(4, {1, 2, 11, 12, 13, 14, 15, 16, 17, 18});
    QCOMPARE(d.chosen, 2);
    QCOMPARE(part(d, 2, "branch"), 2.0);
    // 5. Matches {1,2,11,12,13} (5 of 6), that node's only tenant is w2 -> w2.
    QCOMPARE(r.route(5, {1, 2, 11, 12, 13, 40}).chosen, 2);
    // 6. Matches {1,2,3}: node 3's tenants [w0] -> w0.
    QCOMPARE(r.route(6, {1, 2, 3, 50}).chosen, 0);
    // 7. Loads 80/10/5: 75 > 64 and 80 > 7.5 -> shortest queue w2, tree or not; inserted under w2.
    r.loads[0].running = 80;
    r.loads[1].running = 10;
    r.loads[2].running = 5;
    d = r.route(7, A);
    QCOMPARE(d.chosen, 2);
    QCOMPARE(part(d, 2, "imbalanced"), 1.0);
    // 8. Loads 70/10/60: 70 - 10 = 60 <= 64: balanced. A matches whole; node 10's tenants [w0, w2]
    //    in the order they reached it -> w0 (upstream: the first key of the node's map).
    r.loads[0].running = 70;
    r.loads[2].running = 60;
    QCOMPARE(r.route(8, A).chosen, 0);
    // 9. w1 unhealthy: C's tenant w1 cannot take it -> the first healthy worker, w0.
    r.loads[1].alive = false;
    QCOMPARE(r.route(9, {30, 31, 32, 33, 34, 35, 36, 37, 38, 39}).chosen, 0);
  }

  // evict_tenant_by_size: a tenant over the size loses its least recently used leaves first.
  void treeEvictsLruLeavesPerTenant() {
    ApproxRadixTree t(2);
    t.insert(std::vector<BlockHash>{1, 2, 3}, 0, 1);
    t.insert(std::vector<BlockHash>{1, 4, 5}, 0, 2);
    t.insert(std::vector<BlockHash>{1, 2, 3}, 1, 3);
    QCOMPARE(t.size(0), std::int64_t(5));
    t.evictTenantBySize(3);
    QCOMPARE(t.size(0), std::int64_t(3));  // 3 then 2 (access 1) went; 5 (access 2) stays
    QCOMPARE(t.size(1), std::int64_t(3));  // within the size: untouched
    auto m = t.prefixMatch(std::vector<BlockHash>{1, 4, 5}, 4);
    QCOMPARE(m.matched, std::int64_t(3));
    QCOMPARE(m.tenant, 0);
    m = t.prefixMatch(std::vector<BlockHash>{1, 2, 3}, 5);
    QCOMPARE(m.tenant, 1);  // only w1 is left on that path
    QCOMPARE(m.per_tenant[0], std::int64_t(1));
    QCOMPARE(t.smallestTenant(), 0);  // 3 and 3: the lower id
  }

  void knobsKeepUpstreamDefaults() {
    KnobRegistry k;
    QCOMPARE(k.get(KnobId::CacheThreshold), 0.3);
    QCOMPARE(k.get(KnobId::BalanceAbsThreshold), 64.0);
    QCOMPARE(k.get(KnobId::BalanceRelThreshold), 1.5);
    QCOMPARE(k.get(KnobId::EvictionIntervalS), 120.0);
    QCOMPARE(k.get(KnobId::MaxTreeSize), 67108864.0);  // 2**26
    QCOMPARE(k.get(KnobId::OverlapScoreWeight), 1.0);
    QCOMPARE(k.get(KnobId::RouterTemperature), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestAnchorPolicies)
#include "test_anchor_policies.moc"
