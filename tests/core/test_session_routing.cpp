// The per-session routing state (issue 17 section 2) against the full recomputation: two routers
// fed the same long random workload - many multi-turn sessions whose prompts extend, repeat,
// branch or change an earlier block (as hashes that are not prefix-chained would), stores by the
// session and by others (shared blocks), evictions of tails and of single blocks, worker crashes,
// tracked requests - one resuming each session's match from its last turn
// and one recomputing it over the whole prompt. Every decision must be the same, to the score.
#include <QtTest>

#include <random>

#include "core/router/Router.h"

using namespace kvscope;

namespace {

constexpr int kDefaultWorkers = 6;  // the usual cluster; a 300-worker one spills holder sets

struct Workload {
  std::mt19937_64 rng;
  std::uint64_t next_hash = 1;
  std::vector<BlockHash> boilerplate;
  std::vector<std::vector<BlockHash>> chains;  // per session (index = session - 1)

  Workload(std::uint64_t seed, int sessions) : rng(seed) {
    for (int i = 0; i < 5; ++i) boilerplate.push_back(fresh());
    chains.resize(static_cast<std::size_t>(sessions));
    for (auto& c : chains) c = boilerplate;
  }
  // Fresh hashes are never reused, so equal hashes mean equal prefixes, as in real block chains
  // (except for the edits nextTurn makes on purpose).
  BlockHash fresh() { return 0x5e55000000000000ULL + next_hash++; }
  int pick(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
  bool chance(int percent) { return pick(100) < percent; }
  SessionId session() { return static_cast<SessionId>(1 + pick(static_cast<int>(chains.size()))); }
  std::vector<BlockHash>& chain(SessionId s) { return chains[static_cast<std::size_t>(s - 1)]; }

  // The session's next prompt: mostly its last one plus a few new blocks; sometimes the same again,
  // a branch (an edited history: truncated, then new blocks) or a fresh start.
  void nextTurn(SessionId s) {
    auto& c = chain(s);
    const int r = pick(100);
    if (r < 8) {
      c = boilerplate;
    } else if (r < 16 && c.size() > 1) {
      c.resize(1 + static_cast<std::size_t>(pick(static_cast<int>(c.size()))));
    } else if (r < 24) {
      return;
    } else if (r < 30 && c.size() > 2) {
      // A client whose hashes are not prefix-chained: one earlier block changed, the last one kept.
      c[static_cast<std::size_t>(pick(static_cast<int>(c.size()) - 1))] = fresh();
    }
    const int grow = 1 + pick(30);
    for (int i = 0; i < grow; ++i) c.push_back(fresh());
    if (c.size() > 400) c = boilerplate;
  }
};

struct Pair {
  KnobRegistry knobs;
  Router cached;
  Router full;
  Pair(const char* policy, int workers) : cached(workers, 16, knobs, 7), full(workers, 16, knobs, 7) {
    cached.setPolicy(policy);
    full.setPolicy(policy);
    full.setSessionState(false);
  }
  void stored(WorkerId w, SessionId s, std::span<const BlockHash> h) {
    QCOMPARE(cached.storeBlocks(w, s, h), full.storeBlocks(w, s, h));
  }
  void removed(WorkerId w, std::span<const BlockHash> h) {
    QCOMPARE(cached.removeBlocks(w, h), full.removeBlocks(w, h));
  }
};

}  // namespace

class TestSessionRouting : public QObject {
  Q_OBJECT
 private slots:
  void sameDecisionsAsFullRecomputation_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<int>("seed");
    QTest::addColumn<int>("workers");
    for (const char* p : {"kv-aware", "exclusive-overlap", "unified", "dynamo-kv"})
      for (int seed = 1; seed <= 3; ++seed)
        QTest::newRow(qPrintable(QString("%1 seed %2").arg(p).arg(seed))) << QString(p) << seed << kDefaultWorkers;
    for (const char* p : {"kv-aware", "exclusive-overlap"})
      QTest::newRow(qPrintable(QString("%1 seed 4, 300 workers").arg(p))) << QString(p) << 4 << 300;
  }

  void sameDecisionsAsFullRecomputation() {
    QFETCH(QString, policy);
    QFETCH(int, seed);
    QFETCH(int, workers);
    const int kWorkers = workers;
    Workload wl(static_cast<std::uint64_t>(seed), 40);
    Pair routers(policy.toUtf8().constData(), kWorkers);
    if (seed == 3) {
      // Aggregated serving, so dynamo-kv's score uses the overlap too.
      routers.cached.setDisaggregated(false);
      routers.full.setDisaggregated(false);
    }
    std::vector<WorkerLoad> loads(kWorkers);
    RouteDecision a, b;
    RequestId next_request = 1;
    std::vector<RequestId> tracked;
    int decisions = 0;
    for (int step = 0; step < 30000; ++step) {
      const int op = wl.pick(100);
      const SessionId s = wl.session();
      auto& chain = wl.chain(s);
      const WorkerId w = static_cast<WorkerId>(wl.pick(kWorkers));
      if (op < 40) {
        wl.nextTurn(s);
        for (auto& l : loads) {
          l.alive = !wl.chance(3);
          l.running = wl.pick(8);
          l.queued = wl.pick(3);
          l.pending_prefill_tokens = wl.pick(5000);
          l.ongoing_tokens = wl.pick(100000);
          l.assigned_sessions = wl.pick(10);
        }
        const RouteRequest r{next_request++, s, 2, static_cast<std::int32_t>(chain.size() * 16 - wl.pick(16)),
                             chain,          0};
        routers.cached.decide(r, loads, a);
        routers.full.decide(r, loads, b);
        ++decisions;
        for (int x = 0; x < kWorkers; ++x) {
          QCOMPARE(routers.cached.lastMatch().prefix_blocks[x], routers.full.lastMatch().prefix_blocks[x]);
          QCOMPARE(routers.cached.lastMatch().exclusive_blocks[x], routers.full.lastMatch().exclusive_blocks[x]);
        }
        QCOMPARE(a.chosen, b.chosen);
        QCOMPARE(a.candidates.size(), b.candidates.size());
        for (std::size_t i = 0; i < a.candidates.size(); ++i) {
          QCOMPARE(a.candidates[i].worker, b.candidates[i].worker);
          QCOMPARE(a.candidates[i].score, b.candidates[i].score);
          QCOMPARE(a.candidates[i].eligible, b.candidates[i].eligible);
        }
        if (a.chosen == kNoWorker) continue;
        // The chosen worker prefills the prompt (all of it, or part when interrupted), and reports
        // either the whole prompt or, as a KV pool does, only the blocks past what it had matched.
        const auto stored =
            wl.chance(80) ? chain.size() : static_cast<std::size_t>(wl.pick(static_cast<int>(chain.size())));
        const auto from =
            wl.chance(50) ? std::min<std::size_t>(
                                stored, static_cast<std::size_t>(
                                            routers.full.lastMatch().prefix_blocks[static_cast<std::size_t>(a.chosen)]))
                          : 0;
        routers.stored(a.chosen, s, std::span<const BlockHash>(chain).subspan(from, stored - from));
        routers.cached.bind(s, a.chosen);
        routers.full.bind(s, a.chosen);
        if (wl.chance(50)) {
          routers.cached.track(r.id, a.chosen, chain, r.input_tokens);
          routers.full.track(r.id, a.chosen, chain, r.input_tokens);
          tracked.push_back(r.id);
        }
      } else if (op < 55) {
        // Another worker stores part of the session's chain, as the session itself (a migration or
        // a seed) or as another session (its blocks become shared: exclusive counts shrink).
        const SessionId by = wl.chance(50) ? s : wl.session();
        routers.stored(w, by,
                       std::span<const BlockHash>(chain).first(
                           static_cast<std::size_t>(wl.pick(static_cast<int>(chain.size()) + 1))));
      } else if (op < 75) {
        // Eviction of a tail of the chain.
        const auto from = static_cast<std::size_t>(wl.pick(static_cast<int>(chain.size())));
        routers.removed(w, std::span<const BlockHash>(chain).subspan(from));
      } else if (op < 88) {
        // A single block in the middle (a block-level eviction or a lost event's correction).
        const BlockHash h = chain[static_cast<std::size_t>(wl.pick(static_cast<int>(chain.size())))];
        routers.removed(w, std::span<const BlockHash>(&h, 1));
      } else if (op < 89) {
        routers.cached.onWorkerCleared(w);
        routers.full.onWorkerCleared(w);
      } else if (!tracked.empty()) {
        const auto i = static_cast<std::size_t>(wl.pick(static_cast<int>(tracked.size())));
        if (wl.chance(50)) {
          routers.cached.prefillDone(tracked[i]);
          routers.full.prefillDone(tracked[i]);
        } else {
          routers.cached.release(tracked[i]);
          routers.full.release(tracked[i]);
          tracked.erase(tracked.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
    }
    QCOMPARE(routers.cached.index().size(), routers.full.index().size());
    // The state was used, not bypassed: most decisions continued a session's previous turn.
    const auto& cache = routers.cached.sessionCache();
    QCOMPARE(cache.resumed() + cache.recomputed(), static_cast<std::uint64_t>(decisions));
    QVERIFY2(cache.resumed() > static_cast<std::uint64_t>(decisions) / 2,
             qPrintable(QString("resumed %1 of %2").arg(cache.resumed()).arg(decisions)));
    QCOMPARE(routers.full.sessionCache().resumed() + routers.full.sessionCache().recomputed(), std::uint64_t{0});
    // Both shortcuts were taken: stores deepened states, and removals were cleared by the index's
    // shared and own stamps without reading its log.
    QVERIFY2(cache.deepened() > 0 && cache.stampCleared() > 0,
             qPrintable(QString("deepened %1, stamp-cleared %2").arg(cache.deepened()).arg(cache.stampCleared())));
  }

  void resumeEqualsMatchFromAnyValidDepth() {
    // PrefixIndex::resume from depths at or below the true match, with the exclusive counts of
    // those depths, gives match()'s answer.
    std::mt19937_64 rng(11);
    PrefixIndex index;
    std::vector<BlockHash> chain;
    for (int i = 0; i < 60; ++i) chain.push_back(100 + static_cast<BlockHash>(i));
    for (int w = 0; w < kDefaultWorkers; ++w)
      index.stored(w, 1 + w % 2, std::span<const BlockHash>(chain).first(static_cast<std::size_t>(rng() % 61)));
    PrefixIndex::Match truth;
    index.match(chain, 1, kDefaultWorkers, truth);
    for (int trial = 0; trial < 200; ++trial) {
      PrefixIndex::Match m;
      for (int w = 0; w < kDefaultWorkers; ++w) {
        const auto d = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(truth.prefix_blocks[w] + 1));
        PrefixIndex::Match part;
        index.match(std::span<const BlockHash>(chain).first(static_cast<std::size_t>(d)), 1, kDefaultWorkers, part);
        m.prefix_blocks[w] = d;
        m.exclusive_blocks[w] = part.exclusive_blocks[w];
      }
      index.resume(chain, 1, kDefaultWorkers, m);
      for (int w = 0; w < kDefaultWorkers; ++w) {
        QCOMPARE(m.prefix_blocks[w], truth.prefix_blocks[w]);
        QCOMPARE(m.exclusive_blocks[w], truth.exclusive_blocks[w]);
      }
    }
  }

  void stateIsBounded() {
    PrefixIndex index;
    SessionPrefixCache cache(64);
    std::vector<BlockHash> chain{1, 2, 3};
    index.stored(0, 1, chain);
    PrefixIndex::Match m;
    for (SessionId s = 1; s <= 1000; ++s) {
      cache.match(index, chain, s, 2, m);
      QVERIFY(cache.size() <= 64);
      QCOMPARE(m.prefix_blocks[0], 3);
    }
    // The most recently routed session kept its state.
    chain.push_back(4);
    cache.match(index, chain, 1000, 2, m);
    QCOMPARE(cache.resumed(), std::uint64_t{1});
    QCOMPARE(m.prefix_blocks[0], 3);
  }
};

QTEST_GUILESS_MAIN(TestSessionRouting)
#include "test_session_routing.moc"
