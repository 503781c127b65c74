// What the lab's proxy policies see (core/router/policies/LabProxyView.h): the proxy's own
// counters, kept by the router for the requests it routed, and its LRU estimate of each instance's
// cache (ProxyBlockCache: 512-token blocks, longest cached prefix, move-to-end on hit, as the lab's
// tests/test_proxy_pick.py @ 0701f84c exercises its InstanceState LRU).
#include <QtTest>

#include <chrono>

#include "core/router/Router.h"

using namespace kvscope;

namespace {

// A prompt of `blocks` router blocks whose hashes are `base`, `base` + 1, ... (a chain: equal
// hashes mean equal prefixes, so two prompts with the same base share their leading blocks).
std::vector<BlockHash> prompt(BlockHash base, int blocks) {
  std::vector<BlockHash> h;
  h.reserve(static_cast<std::size_t>(blocks));
  for (int i = 0; i < blocks; ++i) h.push_back(base + static_cast<BlockHash>(i));
  return h;
}

}  // namespace

class TestLabProxyView : public QObject {
  Q_OBJECT
 private slots:
  void strideRoundsToWholeRouterBlocks() {
    QCOMPARE(ProxyBlockCache::stride(512, 16), 32);  // vLLM's 16-token blocks: exact
    QCOMPARE(ProxyBlockCache::stride(512, 24), 21);  // SGLang's 24: 504-token proxy blocks
    QCOMPARE(ProxyBlockCache::proxyBlockTokens(512, 24), std::int64_t{504});
    QCOMPARE(ProxyBlockCache::stride(512, 1024), 1);  // never below one block
  }

  // Proxy block j is router block (j + 1) x stride - 1; the hit stops at the first miss.
  void prefixHitIsTheLeadingRun() {
    ProxyBlockCache cache(2);
    const auto a = prompt(1000, 8);  // 4 proxy blocks of stride 2: router blocks 1, 3, 5, 7
    cache.insert(0, a, 2, 100);
    QCOMPARE(cache.size(0), std::size_t{4});
    QCOMPARE(cache.prefixHit(0, a, 2), std::int64_t{4});
    QCOMPARE(cache.prefixHit(1, a, 2), std::int64_t{0});
    auto b = a;
    b[3] = 77;  // the second proxy block differs: only the first one hits
    QCOMPARE(cache.prefixHit(0, b, 2), std::int64_t{1});
    QCOMPARE(cache.prefixHit(0, std::span<const BlockHash>(a).first(5), 2),
             std::int64_t{2});  // a partial proxy block is no block
  }

  // An LRU of 4 blocks: inserting a fifth evicts the least recent; a hit makes a block recent.
  void lruEvictsTheLeastRecent() {
    ProxyBlockCache cache(1);
    cache.insert(0, prompt(10, 2), 1, 4);                             // 10, 11
    cache.insert(0, prompt(20, 2), 1, 4);                             // 20, 21
    QCOMPARE(cache.prefixHit(0, prompt(10, 1), 1), std::int64_t{1});  // 10 is now the most recent
    cache.insert(0, prompt(30, 1), 1, 4);                             // evicts 11, the least recent
    QCOMPARE(cache.size(0), std::size_t{4});
    QCOMPARE(cache.prefixHit(0, prompt(10, 2), 1), std::int64_t{1});  // 10 yes, 11 gone
    QCOMPARE(cache.prefixHit(0, prompt(20, 2), 1), std::int64_t{2});
    QCOMPARE(cache.prefixHit(0, prompt(30, 1), 1), std::int64_t{1});
    cache.clear();
    QCOMPARE(cache.size(0), std::size_t{0});
  }

  // Through the router: lmetric under cache_view proxy-lru. The proxy remembers what it sent (not
  // what the engine stored), counts pending prefill by its own estimate, and moves the counters
  // at the first token and at the end.
  void routerKeepsTheProxysView() {
    KnobRegistry knobs;
    QVERIFY(knobs.apply({{"proxy_block_tokens", 48}}, "test").ok);  // 2 router blocks of 24
    Router router(2, 24, knobs, 1);
    QVERIFY(router.setPolicy("lmetric"));
    std::vector<WorkerLoad> loads(2);
    for (auto& l : loads) l.kv_capacity = 48 * 100;  // LRUs of 100 proxy blocks
    const auto hashes = prompt(500, 10);             // 240 tokens, 5 proxy blocks
    RouteDecision d;
    router.decide({1, 1, 1, 240, hashes, 0}, loads, d);
    QCOMPARE(d.chosen, 0);  // nothing anywhere: LMetric's 0 x P tie to worker 0
    router.track(1, 0, hashes, 240);
    QCOMPARE(router.proxyCache().size(0), std::size_t{5});
    QCOMPARE(router.active().activeTokens(0), std::int64_t{240});  // all of it uncached by the proxy's estimate
    QCOMPARE(router.active().inputTokens(0), std::int64_t{240});

    // The engine never stored a block (the index is empty), but the proxy believes worker 0 has it.
    router.decide({2, 2, 1, 240, hashes, 1}, loads, d);
    QCOMPARE(d.candidates.front().worker, 1);  // w1: 0 requests -> 0; w0: (240 + 0) x 1
    double w0_hit = -1;
    for (const auto& c : d.candidates)
      if (c.worker == 0) w0_hit = c.component("cache_hit");
    QCOMPARE(w0_hit, 240.0);
    router.prefillDone(1);
    QCOMPARE(router.active().activeTokens(0), std::int64_t{0});
    QCOMPARE(router.active().decodeTokens(0), std::int64_t{240});
    router.release(1);
    QCOMPARE(router.active().activeRequests(0), 0);
    QCOMPARE(router.active().decodeTokens(0), std::int64_t{0});
    QCOMPARE(router.active().inputTokens(0), std::int64_t{0});

    // cache_view exact: the engine's index, which holds nothing.
    QVERIFY(knobs.apply({{"cache_view", 0}}, "test").ok);
    router.decide({3, 3, 1, 240, hashes, 2}, loads, d);
    for (const auto& c : d.candidates) QCOMPARE(c.component("cache_hit"), 0.0);
    router.track(3, 1, hashes, 240);
    QCOMPARE(router.proxyCache().size(1), std::size_t{0});  // the LRU is fed only while it is read
  }

  // A policy that does not read the view (kv-aware) never touches the LRU.
  void otherPoliciesLeaveItAlone() {
    KnobRegistry knobs;
    Router router(2, 24, knobs, 1);
    std::vector<WorkerLoad> loads(2);
    for (auto& l : loads) l.kv_capacity = 1'000'000;
    const auto hashes = prompt(500, 64);
    RouteDecision d;
    router.decide({1, 1, 1, 64 * 24, hashes, 0}, loads, d);
    router.track(1, d.chosen, hashes, 64 * 24);
    QCOMPARE(router.proxyCache().size(0) + router.proxyCache().size(1), std::size_t{0});
  }

  // Where a decision's time goes (bench_router prints it): nothing measured unless asked; asked,
  // the lookup (here the proxy's LRU too) and the scoring, inside the time the call took.
  void phaseTimesOnlyWhenAsked() {
    KnobRegistry knobs;
    Router router(2, 24, knobs, 1);
    QVERIFY(router.setPolicy("lmetric"));
    std::vector<WorkerLoad> loads(2);
    for (auto& l : loads) l.kv_capacity = 1'000'000;
    const auto hashes = prompt(500, 2000);
    RouteDecision d;
    router.decide({1, 1, 1, 2000 * 24, hashes, 0}, loads, d);
    QCOMPARE(router.lastPhaseTimes().lookup_ns + router.lastPhaseTimes().score_ns, std::int64_t{0});
    router.setPhaseTiming(true);
    std::int64_t measured = 0, wall = 0;
    for (RequestId r = 2; r < 22; ++r) {
      const auto start = std::chrono::steady_clock::now();
      router.decide({r, r, 1, 2000 * 24, hashes, static_cast<SimTime>(r)}, loads, d);
      wall += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
      const Router::PhaseTimes t = router.lastPhaseTimes();
      QVERIFY(t.lookup_ns >= 0 && t.score_ns >= 0);
      measured += t.lookup_ns + t.score_ns;
    }
    QVERIFY(measured > 0);  // 20 lookups of 2,000 blocks: microseconds each
    QVERIFY(measured <= wall);
  }
};

QTEST_GUILESS_MAIN(TestLabProxyView)
#include "test_lab_proxy_view.moc"
