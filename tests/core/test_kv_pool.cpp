// The decode worker's KV pool: shared boilerplate stored once, session-level vs block-level
// eviction amounts, locks, and the KV events that feed the router's prefix index.
#include <QtTest>

#include "core/router/PrefixIndex.h"
#include "core/sim/KvPool.h"

using namespace kvscope;

namespace {
struct IndexListener : KvEventListener {
  PrefixIndex index;
  int cleared = 0;
  void onBlocksStored(WorkerId w, SessionId s, std::span<const BlockHash> h) override { index.stored(w, s, h); }
  void onBlocksRemoved(WorkerId w, std::span<const BlockHash> h) override { index.removed(w, h); }
  void onWorkerCleared(WorkerId w) override {
    index.clearWorker(w);
    ++cleared;
  }
};

// Session s: 10 shared boilerplate blocks, then `own` blocks of its own.
std::vector<BlockHash> chain(SessionId s, int own) {
  std::vector<BlockHash> c;
  for (int j = 0; j < 10; ++j) c.push_back(1000 + j);
  for (int j = 0; j < own; ++j) c.push_back(s * 1000000 + j);
  return c;
}
}  // namespace

class TestKvPool : public QObject {
  Q_OBJECT
 private slots:
  void sharedBoilerplateIsStoredOnce() {
    IndexListener l;
    KvPool pool(0, 100000, 24, EvictionGranularity::Session, &l);
    pool.commit(1, chain(1, 20), 30 * 24 + 7);
    pool.commit(2, chain(2, 5), 15 * 24);
    QCOMPARE(pool.used(), (10 + 20 + 5) * 24 + 7);  // boilerplate once, session 1's 7-token tail
    QCOMPARE(pool.residentSessions(), 2);
    PrefixIndex::Match m;
    const auto c1 = chain(1, 20);
    l.index.match(c1, 1, 1, m);
    QCOMPARE(m.prefix_blocks[0], 30);
    QCOMPARE(m.exclusive_blocks[0], 20);  // the boilerplate was stored by session 2 as well
  }

  void sharedBlocksLeaveWithTheirLastSession() {
    // Three sessions share the boilerplate: it stays resident (and held in the index) until the
    // last of them is released, and only then is it reported removed.
    IndexListener l;
    KvPool pool(0, 100000, 24, EvictionGranularity::Session, &l);
    for (SessionId s = 1; s <= 3; ++s) pool.commit(s, chain(s, 4), 14 * 24);
    QCOMPARE(pool.residentBlocks(), std::size_t{10 + 3 * 4});
    // Session 1 grows its chain: the growth is charged, the shared blocks are not charged again.
    QCOMPARE(pool.commitGrowth(1, chain(1, 6), 16 * 24), 2 * 24);
    // Session 3 alone would free its own 4 blocks, not the boilerplate others still use.
    QCOMPARE(pool.commitGrowth(3, {}, 0), -4 * 24);
    QCOMPARE(pool.release(1), 4 * 24);
    QCOMPARE(pool.release(2), 4 * 24);
    QVERIFY(l.index.holds(1000, 0));
    QCOMPARE(pool.matchPrefixTokens(chain(9, 0)), 10 * 24);
    // Session 3 is the boilerplate's last: releasing it frees all 14 blocks.
    QCOMPARE(pool.commitGrowth(3, {}, 0), -14 * 24);
    QCOMPARE(pool.release(3), 14 * 24);
    QCOMPARE(pool.residentBlocks(), std::size_t{0});
    QCOMPARE(pool.used(), 0);
    QVERIFY(!l.index.holds(1000, 0));
    QCOMPARE(l.index.size(), std::size_t{0});
  }

  void commitWithinEvictsOrKeepsLessButNeverOverfills() {
    KvPool pool(0, 30 * 24, 24, EvictionGranularity::Session, nullptr);  // 30 blocks
    pool.commitWithin(1, chain(1, 5), 15 * 24);
    pool.commitWithin(2, chain(2, 10), 20 * 24);  // the boilerplate is shared: 10 new blocks
    QCOMPARE(pool.used(), 25 * 24);
    pool.commitWithin(1, chain(1, 7), 17 * 24);  // session 1's next turn: 2 blocks more
    QCOMPARE(pool.used(), 27 * 24);
    // Session 3's 12 own blocks do not fit: the least recently used idle session (2) goes.
    pool.commitWithin(3, chain(3, 12), 22 * 24);
    QVERIFY(!pool.hasSession(2));
    QCOMPARE(pool.sessionTokens(3), 22 * 24);
    QCOMPARE(pool.used(), (10 + 7 + 12) * 24);
    // Everything else pinned by running turns: session 4 keeps what fits, the pool stays full.
    pool.lock(1);
    pool.lock(3);
    pool.commitWithin(4, chain(4, 20), 30 * 24);
    QCOMPARE(pool.used(), pool.capacity());
    QCOMPARE(pool.sessionTokens(4), 11 * 24);  // the boilerplate and one block of its own
    QCOMPARE(pool.capacityViolations(), std::int64_t{0});
  }

  void cachedTokensIncludeTheTailWhenThePromptExtendsTheChain() {
    KvPool pool(0, 100000, 24, EvictionGranularity::Session, nullptr);
    pool.commit(1, chain(1, 20), 30 * 24 + 500);  // last turn's output: 500 unhashed tokens
    const auto next = chain(1, 60);               // the next prompt covers those tokens and more
    QCOMPARE(pool.cachedTokensFor(1, next, 60 * 24 + 10), 30 * 24 + 500);
    QCOMPARE(pool.cachedTokensFor(2, chain(2, 60), 60 * 24 + 10), 10 * 24);  // another session: boilerplate only
    QCOMPARE(pool.matchPrefixTokens(next), 30 * 24);
  }

  void sessionLevelFreesWholeIdleSessions() {
    KvPool pool(0, 100000, 24, EvictionGranularity::Session, nullptr);
    std::vector<KvPool::EvictionReport> reports;
    pool.setEvictionCallback([&](const KvPool::EvictionReport& r) { reports.push_back(r); });
    pool.commit(1, chain(1, 1000), 1010 * 24);  // LRU
    pool.commit(2, chain(2, 1000), 1010 * 24);
    pool.commit(3, chain(3, 1000), 1010 * 24);
    pool.lock(1);  // session 1 has a request running: it may not be evicted
    const auto before = pool.used();
    const auto rep = pool.makeRoom(1000, pool.used());  // needs only 1000 tokens
    QCOMPARE(rep.sessions_hit, 1);
    QCOMPARE(rep.session, SessionId{2});
    QCOMPARE(rep.tokens_freed, 1000 * 24);  // the whole tail; the shared boilerplate stays
    QCOMPARE(pool.used(), before - 1000 * 24);
    QCOMPARE(reports.size(), std::size_t{1});
    QVERIFY(!pool.hasSession(2));
    QVERIFY(pool.hasSession(1));
  }

  void blockLevelFreesOnlyWhatIsNeeded() {
    IndexListener l;
    KvPool pool(0, 100000, 24, EvictionGranularity::Block, &l);
    pool.commit(1, chain(1, 1000), 1010 * 24 + 5);
    pool.commit(2, chain(2, 1000), 1010 * 24);
    const auto rep = pool.makeRoom(100, pool.used());
    QCOMPARE(rep.sessions_hit, 1);
    QVERIFY(rep.tokens_freed >= 100 && rep.tokens_freed < 100 + 24);  // leaves of 24 tokens
    QVERIFY(pool.hasSession(1));
    // The trimmed leaves left the index: session 1 now matches 1010 - 4 blocks.
    PrefixIndex::Match m;
    const auto c1 = chain(1, 1000);
    l.index.match(c1, 1, 1, m);
    QCOMPARE(m.prefix_blocks[0], 1010 - 4);
  }

  void lockedSessionsAreNeverEvicted() {
    KvPool pool(0, 100000, 24, EvictionGranularity::Block, nullptr);
    pool.commit(1, chain(1, 100), 110 * 24);
    pool.lock(1);
    const auto rep = pool.makeRoom(1000000, 0);
    QCOMPARE(rep.tokens_freed, 0);
    QCOMPARE(pool.release(1), 0);  // a running request pins its chain
    pool.unlock(1);
    QCOMPARE(pool.release(1), 110 * 24);
    QCOMPARE(pool.used(), 0);
  }

  void clearDropsEverythingAndTellsTheIndex() {
    IndexListener l;
    KvPool pool(3, 100000, 24, EvictionGranularity::Session, &l);
    pool.commit(1, chain(1, 10), 20 * 24);
    pool.reserve(500);
    pool.clear();
    QCOMPARE(pool.used(), 0);
    QCOMPARE(l.cleared, 1);
    QCOMPARE(l.index.size(), std::size_t{0});
  }
};

QTEST_GUILESS_MAIN(TestKvPool)
#include "test_kv_pool.moc"
