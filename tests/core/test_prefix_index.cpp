// The prefix index against a brute-force model: random stored/removed/cleared operations by several
// sessions on several workers (a few, and a 300- and 512-worker cluster whose blocks spill from the
// two inline holders to a shared set and back), then every match and resume compared with a direct
// recomputation.
#include <QtTest>

#include <map>
#include <random>
#include <set>

#include "core/router/PrefixIndex.h"

using namespace kvscope;

namespace {

struct BruteForce {
  std::map<BlockHash, std::set<int>> holders;        // hash -> workers
  std::map<BlockHash, std::set<SessionId>> storers;  // hash -> sessions that stored it while resident

  void stored(int w, SessionId s, const std::vector<BlockHash>& hs) {
    for (auto h : hs) {
      holders[h].insert(w);
      storers[h].insert(s);
    }
  }
  void removed(int w, const std::vector<BlockHash>& hs) {
    for (auto h : hs) {
      auto it = holders.find(h);
      if (it == holders.end()) continue;
      it->second.erase(w);
      if (it->second.empty()) {
        holders.erase(it);
        storers.erase(h);
      }
    }
  }
  void clear(int w) {
    std::vector<BlockHash> all;
    for (auto& [h, ws] : holders) all.push_back(h);
    removed(w, all);
  }
  std::pair<int, int> match(const std::vector<BlockHash>& hs, SessionId s, int w) const {
    int prefix = 0, exclusive = 0;
    for (auto h : hs) {
      auto it = holders.find(h);
      if (it == holders.end() || !it->second.count(w)) break;
      ++prefix;
      const auto& st = storers.at(h);
      if (st.size() == 1 && *st.begin() == s) ++exclusive;
    }
    return {prefix, exclusive};
  }
};

}  // namespace

class TestPrefixIndex : public QObject {
  Q_OBJECT
 private slots:
  void matchesBruteForce_data() {
    QTest::addColumn<int>("seed");
    QTest::addColumn<int>("workers");
    for (int s = 1; s <= 8; ++s) QTest::newRow(qPrintable(QString("seed %1, 5 workers").arg(s))) << s << 5;
    for (int s = 1; s <= 3; ++s) QTest::newRow(qPrintable(QString("seed %1, 300 workers").arg(s))) << s << 300;
    QTest::newRow("seed 4, 512 workers") << 4 << kMaxWorkers;
  }

  void matchesBruteForce() {
    QFETCH(int, seed);
    QFETCH(int, workers);
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    const int kWorkers = workers;
    // Chains: a shared boilerplate of 6 blocks, then per-session blocks; prefixes of various lengths.
    auto chain = [](SessionId s, int len) {
      std::vector<BlockHash> c;
      for (int j = 0; j < len; ++j) c.push_back(j < 6 ? 1000 + j : s * 100000 + j);
      return c;
    };
    PrefixIndex index;
    BruteForce model;
    for (int step = 0; step < 3000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      const int w = static_cast<int>(rng() % kWorkers);
      const SessionId s = 1 + rng() % 7;
      const int len = 1 + static_cast<int>(rng() % 30);
      auto c = chain(s, len);
      if (op < 6) {
        index.stored(w, s, c);
        model.stored(w, s, c);
      } else if (op < 9) {
        // Remove a tail, as eviction does.
        const int from = static_cast<int>(rng() % c.size());
        std::vector<BlockHash> tail(c.begin() + from, c.end());
        index.removed(w, tail);
        model.removed(w, tail);
      } else if (step % 50 == 0) {
        index.clearWorker(w);
        model.clear(w);
      }
      if (step % 7 == 0) {
        const SessionId q = 1 + rng() % 7;
        auto probe = chain(q, 1 + static_cast<int>(rng() % 35));
        PrefixIndex::Match m;
        index.match(probe, q, kWorkers, m);
        // resume() from a known-good shorter depth per worker (its match on a prefix of the probe)
        // must land on the same counts.
        const std::size_t cut = rng() % (probe.size() + 1);
        PrefixIndex::Match r;
        index.match(std::span<const BlockHash>(probe).first(cut), q, kWorkers, r);
        index.resume(probe, q, kWorkers, r);
        for (int x = 0; x < kWorkers; ++x) {
          const auto [prefix, exclusive] = model.match(probe, q, x);
          QCOMPARE(m.prefix_blocks[x], prefix);
          QCOMPARE(m.exclusive_blocks[x], exclusive);
          QCOMPARE(r.prefix_blocks[x], prefix);
          QCOMPARE(r.exclusive_blocks[x], exclusive);
        }
        for (BlockHash h : probe) {
          const auto it = model.holders.find(h);
          for (int x = 0; x < kWorkers; x += 1 + kWorkers / 16)
            QCOMPARE(index.holds(h, x), it != model.holders.end() && it->second.count(x) > 0);
        }
      }
    }
    QCOMPARE(index.size(), model.holders.size());
  }

  // A block's holders go inline (one, two), spilled (three and more) and back as workers store and
  // remove it; the index's own count of its bytes stays near 16-byte slots over a large index.
  void holdersSpillAndReturn() {
    PrefixIndex index;
    const std::vector<BlockHash> b{42};
    const std::vector<WorkerId> order{7, 300, 511, 0, 64};
    for (std::size_t k = 0; k < order.size(); ++k) {
      QCOMPARE(index.stored(order[k], 1, b), std::size_t{1});
      QCOMPARE(index.stored(order[k], 1, b), std::size_t{0});  // already held
      for (std::size_t j = 0; j < order.size(); ++j) QCOMPARE(index.holds(42, order[j]), j <= k);
      QCOMPARE(index.holders(42).count(), static_cast<int>(k + 1));
    }
    for (std::size_t k = 0; k < order.size(); ++k) {
      QCOMPARE(index.removed(order[k], b), std::size_t{1});
      QCOMPARE(index.removed(order[k], b), std::size_t{0});
      for (std::size_t j = 0; j < order.size(); ++j) QCOMPARE(index.holds(42, order[j]), j > k);
      QCOMPARE(index.size(), std::size_t{k + 1 < order.size() ? 1u : 0u});
    }
    // Out-of-range workers are ignored, not written past the tables.
    QCOMPARE(index.stored(kMaxWorkers, 1, b), std::size_t{0});
    QCOMPARE(index.stored(-1, 1, b), std::size_t{0});
    QCOMPARE(index.size(), std::size_t{0});

    std::vector<BlockHash> many(1 << 20);
    for (std::size_t i = 0; i < many.size(); ++i) many[i] = 0x9e3779b97f4a7c15ULL * (i + 1);
    for (std::size_t i = 0; i < many.size(); i += 4096)
      index.stored(static_cast<WorkerId>((i / 4096) % kMaxWorkers), i / 4096 + 1,
                   std::span<const BlockHash>(many).subspan(i, 4096));
    QCOMPARE(index.size(), many.size());
    const double per_block = static_cast<double>(index.memoryBytes()) / static_cast<double>(index.size());
    QVERIFY2(per_block <= 40.0, qPrintable(QString("%1 bytes per block").arg(per_block)));
  }

  void sharedBoilerplateIsNotExclusive() {
    PrefixIndex index;
    const std::vector<BlockHash> a{1, 2, 3, 10, 11};
    const std::vector<BlockHash> b{1, 2, 3, 20};
    index.stored(0, /*session*/ 7, a);
    index.stored(1, /*session*/ 8, b);
    PrefixIndex::Match m;
    index.match(a, 7, 2, m);
    QCOMPARE(m.prefix_blocks[0], 5);
    QCOMPARE(m.exclusive_blocks[0], 2);  // 1,2,3 were stored by session 8 too
    QCOMPARE(m.prefix_blocks[1], 3);
    QCOMPARE(m.exclusive_blocks[1], 0);
  }
};

QTEST_GUILESS_MAIN(TestPrefixIndex)
#include "test_prefix_index.moc"
