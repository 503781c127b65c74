// The pools' per-run reference counts (ChainRefs) against a count per block hash, the way the
// pools kept them before: random sessions over prefix-chained paths (forks of each other at any
// depth, a shared boilerplate) take turns that extend or rewrite their chain, are cut at any depth
// (block-level eviction), released whole, locked and unlocked. After every operation the resident
// blocks, what each call returned, every chain's exclusive tail and the resident prefix of random
// prompts must agree with the per-block counts.
#include <QtTest>

#include <map>
#include <random>

#include <absl/container/flat_hash_map.h>

#include "core/sim/ChainRefs.h"

using namespace kvscope;

namespace {

// The reference: a count of chains and of locked chains per block hash.
struct PerBlockRefs {
  absl::flat_hash_map<BlockHash, int> refs, pins;
  std::size_t add(std::span<const BlockHash> path, std::size_t from) {
    std::size_t fresh = 0;
    for (std::size_t i = from; i < path.size(); ++i) fresh += refs[path[i]]++ == 0;
    return fresh;
  }
  std::size_t drop(std::span<const BlockHash> path, std::size_t from) {
    std::size_t freed = 0;
    for (std::size_t i = from; i < path.size(); ++i)
      if (--refs[path[i]] == 0) {
        refs.erase(path[i]);
        ++freed;
      }
    return freed;
  }
  std::size_t pin(std::span<const BlockHash> path, int sign) {
    std::size_t changed = 0;
    for (BlockHash h : path) {
      if (sign > 0) changed += pins[h]++ == 0;
      if (sign < 0 && --pins[h] == 0) {
        pins.erase(h);
        ++changed;
      }
    }
    return changed;
  }
  std::size_t exclusiveTail(std::span<const BlockHash> path) const {
    std::size_t n = 0;
    for (auto it = path.rbegin(); it != path.rend() && refs.at(*it) == 1; ++it) ++n;
    return n;
  }
  std::size_t residentPrefix(std::span<const BlockHash> hashes) const {
    std::size_t n = 0;
    while (n < hashes.size() && refs.contains(hashes[n])) ++n;
    return n;
  }
};

struct Session {
  std::vector<BlockHash> chain;
  bool locked = false;
};

class Workload {
 public:
  explicit Workload(std::uint64_t seed) : rng_(seed) {}

  void run(int steps) {
    std::map<int, Session> sessions;
    for (int step = 0; step < steps; ++step) {
      const int id = static_cast<int>(rng_() % 12);
      Session& s = sessions[id];
      const int op = static_cast<int>(rng_() % 100);
      if (op < 45) {  // a turn: the chain becomes a new prompt (usually its own chain, longer)
        std::vector<BlockHash> prompt = op < 35 && !s.chain.empty() ? s.chain : somePath();
        if (rng_() % 5 == 0) prompt.resize(rng_() % (prompt.size() + 1));
        const std::size_t grow = rng_() % 8;
        for (std::size_t i = 0; i < grow; ++i) prompt.push_back(chained(prompt.empty() ? 0 : prompt.back()));
        paths_.push_back(prompt);
        const std::size_t m = static_cast<std::size_t>(
            std::mismatch(s.chain.begin(), s.chain.end(), prompt.begin(), prompt.end()).first - s.chain.begin());
        if (s.locked) QCOMPARE(refs_.pin(s.chain, -1), model_.pin(s.chain, -1));
        QCOMPARE(refs_.drop(s.chain, m), model_.drop(s.chain, m));
        s.chain = prompt;
        QCOMPARE(refs_.add(s.chain, m), model_.add(s.chain, m));
        if (s.locked) QCOMPARE(refs_.pin(s.chain, +1), model_.pin(s.chain, +1));
      } else if (op < 70 && !s.locked) {  // a cut: the chain keeps its first `keep` blocks
        const std::size_t keep = s.chain.empty() ? 0 : rng_() % s.chain.size();
        QCOMPARE(refs_.drop(s.chain, keep), model_.drop(s.chain, keep));
        s.chain.resize(keep);
      } else if (op < 85) {  // lock or unlock
        const int sign = s.locked ? -1 : +1;
        QCOMPARE(refs_.pin(s.chain, sign), model_.pin(s.chain, sign));
        s.locked = !s.locked;
      } else if (!s.locked) {  // release
        QCOMPARE(refs_.drop(s.chain, 0), model_.drop(s.chain, 0));
        s.chain.clear();
      }
      if (QTest::currentTestFailed()) return;
      QCOMPARE(refs_.blocks(), model_.refs.size());
      for (const auto& [sid, other] : sessions)
        QCOMPARE(refs_.exclusiveTail(other.chain), model_.exclusiveTail(other.chain));
      for (int q = 0; q < 3; ++q) {
        std::vector<BlockHash> prompt = somePath();
        prompt.resize(rng_() % (prompt.size() + 1));
        if (rng_() % 3 == 0) prompt.push_back(chained(prompt.empty() ? 5 : prompt.back()));
        QCOMPARE(refs_.residentPrefix(prompt), model_.residentPrefix(prompt));
      }
      if (QTest::currentTestFailed()) return;
    }
    // Every chain released: nothing is left.
    for (auto& [sid, s] : sessions) {
      if (s.locked) refs_.pin(s.chain, -1);
      refs_.drop(s.chain, 0);
    }
    QCOMPARE(refs_.blocks(), std::size_t{0});
    QCOMPARE(refs_.nodes(), std::size_t{0});
  }

 private:
  BlockHash chained(BlockHash parent) { return (parent * 0x9E3779B97F4A7C15ULL) ^ (next_++ * 0xD6E8FEB86659FD93ULL); }
  // A known prompt cut at a random depth (every session shares the first path's first blocks: the
  // boilerplate), or a new root path.
  std::vector<BlockHash> somePath() {
    if (paths_.empty()) {
      std::vector<BlockHash> boilerplate;
      for (int i = 0; i < 6; ++i) boilerplate.push_back(chained(boilerplate.empty() ? 0 : boilerplate.back()));
      paths_.push_back(boilerplate);
    }
    if (rng_() % 10 == 0) return {};
    const auto& p = paths_[rng_() % paths_.size()];
    return {p.begin(), p.begin() + static_cast<std::ptrdiff_t>(rng_() % (p.size() + 1))};
  }

  std::mt19937_64 rng_;
  std::uint64_t next_ = 1;
  std::vector<std::vector<BlockHash>> paths_;
  ChainRefs refs_;
  PerBlockRefs model_;
};

}  // namespace

class TestChainRefs : public QObject {
  Q_OBJECT
 private slots:
  void agreesWithCountsPerBlock_data() {
    QTest::addColumn<int>("seed");
    for (int seed = 1; seed <= 8; ++seed) QTest::addRow("seed %d", seed) << seed;
  }
  void agreesWithCountsPerBlock() {
    QFETCH(int, seed);
    Workload(static_cast<std::uint64_t>(seed)).run(4000);
  }

  // A session's turns grow its own run in place: the tree keeps a run per fork, not per block.
  void aSessionsTurnsGrowOneRun() {
    ChainRefs refs;
    std::vector<BlockHash> chain;
    std::size_t from = 0;
    for (int turn = 0; turn < 50; ++turn) {
      for (int i = 0; i < 300; ++i) chain.push_back(static_cast<BlockHash>(chain.size() + 1));
      QCOMPARE(refs.add(chain, from), std::size_t{300});
      from = chain.size();
    }
    QCOMPARE(refs.blocks(), std::size_t{15000});
    QCOMPARE(refs.nodes(), std::size_t{1});
    // A second session on the first 100 blocks splits the run once.
    const std::vector<BlockHash> other(chain.begin(), chain.begin() + 100);
    QCOMPARE(refs.add(other, 0), std::size_t{0});
    QCOMPARE(refs.nodes(), std::size_t{2});
    QCOMPARE(refs.exclusiveTail(chain), std::size_t{14900});
    QCOMPARE(refs.exclusiveTail(other), std::size_t{0});
  }
};

QTEST_APPLESS_MAIN(TestChainRefs)
#include "test_chain_refs.moc"
