// The per-run prefix index (ChainIndex) against the per-block one (PrefixIndex), which
// test_prefix_index checks against a brute-force model: random stores, removals (at any depth of
// any path, so not only the prefix-closed residency the twin's pools keep), path-less removals and
// clears by several sessions on several workers, over prefix-chained hashes with forks and a shared
// boilerplate. After every operation both indexes must report the same counts, and every match
// (prefix, exclusive, first foreign block) of random prompts must agree for every worker.
#include <QtTest>

#include <random>

#include "core/router/ChainIndex.h"
#include "core/router/PrefixIndex.h"

using namespace kvscope;

namespace {

// Known paths: each a prefix-chained list of hashes (a hash names its whole prefix).
struct Paths {
  std::vector<std::vector<BlockHash>> all;
  std::uint64_t next = 1;
  std::mt19937_64& rng;

  explicit Paths(std::mt19937_64& r) : rng(r) {}
  BlockHash chained(BlockHash parent) { return (parent * 0x9E3779B97F4A7C15ULL) ^ (next++ * 0xD6E8FEB86659FD93ULL); }
  // A new path: a fork of a known one at a random depth (or a new root), a few blocks longer.
  const std::vector<BlockHash>& fork(std::size_t max_grow) {
    std::vector<BlockHash> p;
    if (!all.empty() && rng() % 4 != 0) {
      const auto& base = all[rng() % all.size()];
      p.assign(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(rng() % (base.size() + 1)));
    }
    const std::size_t grow = 1 + rng() % max_grow;
    for (std::size_t i = 0; i < grow; ++i) p.push_back(chained(p.empty() ? 0 : p.back()));
    all.push_back(std::move(p));
    return all.back();
  }
  const std::vector<BlockHash>& any() { return all.empty() ? fork(12) : all[rng() % all.size()]; }
};

void compareMatches(const PrefixIndex& blocks, const ChainIndex& chains, Paths& paths, int workers,
                    std::mt19937_64& rng, int step) {
  for (int q = 0; q < 4; ++q) {
    std::vector<BlockHash> prompt = paths.any();
    prompt.resize(rng() % (prompt.size() + 1));
    if (rng() % 3 == 0) prompt.push_back(paths.chained(prompt.empty() ? 7 : prompt.back()));  // a block nobody stored
    const SessionId session = 1 + rng() % 5;
    PrefixIndex::Match a, b;
    blocks.match(prompt, session, workers, a);
    chains.match(prompt, session, workers, b);
    for (int w = 0; w < workers; ++w) {
      const auto x = static_cast<std::size_t>(w);
      if (a.prefix_blocks[x] != b.prefix_blocks[x] || a.exclusive_blocks[x] != b.exclusive_blocks[x])
        QFAIL(qPrintable(QString("step %1, worker %2: prefix %3/%4, exclusive %5/%6 (per block/per run)")
                             .arg(step)
                             .arg(w)
                             .arg(a.prefix_blocks[x])
                             .arg(b.prefix_blocks[x])
                             .arg(a.exclusive_blocks[x])
                             .arg(b.exclusive_blocks[x])));
    }
    QCOMPARE(b.first_foreign, a.first_foreign);
    const WorkerId w = static_cast<WorkerId>(rng() % static_cast<std::uint64_t>(workers));
    bool all_held = true;
    for (BlockHash h : prompt) all_held = all_held && blocks.holds(h, w);
    QCOMPARE(chains.holds(prompt, w), all_held);
  }
}

void randomWorkload(int workers, int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Paths paths(rng);
  PrefixIndex blocks;
  ChainIndex chains;
  for (int step = 0; step < steps; ++step) {
    const WorkerId w = static_cast<WorkerId>(rng() % static_cast<std::uint64_t>(workers));
    const SessionId session = 1 + rng() % 5;
    const int op = static_cast<int>(rng() % 100);
    if (op < 50) {
      const auto& path = op < 25 ? paths.fork(12) : paths.any();
      const std::size_t from = rng() % path.size();
      const std::size_t a = blocks.stored(w, session, std::span(path).subspan(from));
      QCOMPARE(chains.stored(w, session, path, from), a);
    } else if (op < 90) {
      const auto& path = paths.any();
      const std::size_t from = rng() % path.size();
      const std::size_t a = blocks.removed(w, std::span(path).subspan(from));
      QCOMPARE(chains.removed(w, path, from), a);
    } else if (op < 97) {
      std::vector<BlockHash> some;
      for (int i = 0; i < 6; ++i) {
        const auto& path = paths.any();
        some.push_back(path[rng() % path.size()]);
      }
      std::sort(some.begin(), some.end());
      some.erase(std::unique(some.begin(), some.end()), some.end());
      const std::size_t a = blocks.removed(w, some);
      QCOMPARE(chains.removedAnywhere(w, some), a);
    } else {
      blocks.clearWorker(w);
      chains.clearWorker(w);
    }
    compareMatches(blocks, chains, paths, workers, rng, step);
    if (QTest::currentTestFailed()) return;
  }
  // Everything removed: no run is left behind.
  for (int w = 0; w < workers; ++w) chains.clearWorker(w);
  QCOMPARE(chains.nodes(), std::size_t{0});
  QCOMPARE(chains.size(), std::size_t{0});
}

}  // namespace

class TestChainIndex : public QObject {
  Q_OBJECT
 private slots:
  void agreesWithThePerBlockIndex_data() {
    QTest::addColumn<int>("workers");
    QTest::addColumn<int>("seed");
    for (int seed = 1; seed <= 6; ++seed) QTest::addRow("4 workers, seed %d", seed) << 4 << seed;
    QTest::addRow("300 workers (spilled holder sets)") << 300 << 7;
    QTest::addRow("512 workers") << kMaxWorkers << 8;
  }
  void agreesWithThePerBlockIndex() {
    QFETCH(int, workers);
    QFETCH(int, seed);
    randomWorkload(workers, 3000, static_cast<std::uint64_t>(seed));
  }

  // The twin's usual pattern costs nodes per session, not per block: a shared boilerplate, then
  // each session's own run growing turn by turn on its worker, reseeded to a second worker, then
  // cut back. A removal that undoes a split joins the runs again.
  void aSessionsTurnsGrowItsOwnRun() {
    ChainIndex index;
    std::vector<BlockHash> boiler{11, 12, 13, 14};
    std::vector<std::vector<BlockHash>> chains;
    for (SessionId s = 1; s <= 8; ++s) {
      std::vector<BlockHash> c = boiler;
      for (int turn = 0; turn < 5; ++turn) {
        const std::size_t from = turn == 0 ? 0 : c.size();
        for (int i = 0; i < 50; ++i) c.push_back(s * 1000000 + c.size());
        QCOMPARE(index.stored(static_cast<WorkerId>(s % 2), s, c, from),
                 turn == 0 && s > 2 ? c.size() - 4 : c.size() - from);
      }
      chains.push_back(c);
    }
    // The boilerplate, split by holders {0} / {1}? No: both workers hold it, one run; then 8 own runs.
    QCOMPARE(index.nodes(), std::size_t{9});
    QCOMPARE(index.size(), std::size_t{4 + 8 * 250});
    // Session 1 (on worker 1) reseeded to worker 0 up to half its chain: its run splits in two.
    QCOMPARE(index.stored(0, 1, std::span(chains[0]).first(129), 0), std::size_t{125});
    QCOMPARE(index.nodes(), std::size_t{10});
    // Worker 0 drops it again: the halves are alike again and join.
    QCOMPARE(index.removed(0, std::span(chains[0]).first(129), 4), std::size_t{125});
    QCOMPARE(index.nodes(), std::size_t{9});
    PrefixIndex::Match m;
    index.match(chains[0], 1, 2, m);
    QCOMPARE(m.prefix_blocks[1], 254);
    QCOMPARE(m.exclusive_blocks[1], 250);
    QCOMPARE(m.prefix_blocks[0], 4);
    // Session 2's tail cut on worker 0, then everything: nothing stays.
    QCOMPARE(index.removed(0, chains[1], 200), std::size_t{54});
    for (const auto& c : chains) index.removed(static_cast<WorkerId>(&c - chains.data() + 1) % 2, c, 0);
    QCOMPARE(index.size(), std::size_t{0});
    QCOMPARE(index.nodes(), std::size_t{0});
  }
};

QTEST_APPLESS_MAIN(TestChainIndex)
#include "test_chain_index.moc"
