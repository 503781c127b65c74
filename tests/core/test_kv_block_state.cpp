// KvBlockState: a worker's cached blocks from its engine's KV events (the SGLang fixture of
// tests/data/kv_events, then hand-made batches): chains, evictions with their tokens, clears,
// other tiers counted and not held, removals of blocks stored before we attached, the bound.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/live/KvBlockState.h"
#include "core/live/KvEventDecoder.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;

namespace {
KvEventBatch fixture(const std::string& name) {
  std::ifstream in(kvscope::test::testDataPath("kv_events/" + name), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string bytes = s.str();
  return KvEventDecoder::decode(bytes.data(), bytes.size(), nullptr).value();
}
KvEventBatch of(std::vector<KvCacheEvent> events) {
  KvEventBatch b;
  b.events = std::move(events);
  return b;
}
}  // namespace

class TestKvBlockState : public QObject {
  Q_OBJECT
 private slots:
  void chainsEvictionsAndClears() {
    KvBlockState state(2);
    // Stored [101, 102], then [103] after 102: one chain of three.
    KvEventBatch first = fixture("sglang-array-v0.msgpack");
    KvEventBatch stores = first;
    stores.events.resize(2);
    QVERIFY(state.apply(1, stores).empty());
    QCOMPARE(state.blocks(1), std::size_t{3});
    QCOMPARE(state.tokens(1), std::int64_t{48});
    QCOMPARE(state.chainLength(1, 103), std::size_t{3});
    QCOMPARE(state.blocks(0), std::size_t{0});  // the other worker untouched

    // Then BlockRemoved [101] and AllBlocksCleared: an eviction of one block, then of the two left.
    KvEventBatch rest = first;
    rest.events.erase(rest.events.begin(), rest.events.begin() + 2);
    const auto out = state.apply(1, rest);
    QCOMPARE(out.size(), std::size_t{2});
    const auto& removed = std::get<Eviction>(out[0]);
    QCOMPARE(removed.worker, 1);
    QCOMPARE(removed.tokens_freed, std::int64_t{16});
    QCOMPARE(removed.granularity, EvictionGranularity::Block);
    QCOMPARE(std::get<Eviction>(out[1]).tokens_freed, std::int64_t{32});
    QCOMPARE(state.blocks(1), std::size_t{0});
    QCOMPARE(state.counts(1).stored, std::uint64_t{3});
    QCOMPARE(state.counts(1).removed, std::uint64_t{3});
    QCOMPARE(state.counts(1).cleared, std::uint64_t{1});
  }

  void otherTiersAndBlocksFromBeforeAttach() {
    KvBlockState state(1);
    KvBlockStored cpu;
    cpu.blocks = {7, 8};
    cpu.block_size = 16;
    cpu.medium = "CPU";
    KvBlockRemoved unknown;
    unknown.blocks = {99};  // stored before we attached: nothing to evict, counted
    const auto out = state.apply(0, of({cpu, unknown}));
    QVERIFY(out.empty());
    QCOMPARE(state.blocks(0), std::size_t{0});
    QCOMPARE(state.counts(0).other_tiers, std::uint64_t{2});
    QCOMPARE(state.counts(0).unknown_removed, std::uint64_t{1});
  }

  // A removal and re-store of the same block in one batch keeps the order of the batch.
  void theBatchOrderIsKept() {
    KvBlockState state(1);
    KvBlockStored s;
    s.blocks = {5};
    s.block_size = 32;
    KvBlockRemoved r;
    r.blocks = {5};
    QCOMPARE(state.apply(0, of({s, r, s})).size(), std::size_t{1});
    QVERIFY(state.holds(0, 5));
    QCOMPARE(state.tokens(0), std::int64_t{32});
  }
};

QTEST_GUILESS_MAIN(TestKvBlockState)
#include "test_kv_block_state.moc"
