// The prefix index against a brute-force model: random stored/removed/cleared operations by several
// sessions on several workers, then every match compared with a direct recomputation.
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
    for (int s = 1; s <= 8; ++s) QTest::newRow(qPrintable(QString("seed %1").arg(s))) << s;
  }

  void matchesBruteForce() {
    QFETCH(int, seed);
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    constexpr int kWorkers = 5;
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
        for (int x = 0; x < kWorkers; ++x) {
          const auto [prefix, exclusive] = model.match(probe, q, x);
          QCOMPARE(m.prefix_blocks[x], prefix);
          QCOMPARE(m.exclusive_blocks[x], exclusive);
        }
      }
    }
    QCOMPARE(index.size(), model.holders.size());
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
