// Block hashes from token ids (core/router/TokenBlockHash.h) are Dynamo's: checked against an
// independent implementation of the formula in ai-dynamo/dynamo lib/llm/src/kv_router/protocols.rs
// @ 0dad7c5188965b617af41bdbf2004aeb8ac5505d, written in Python over Debian's python3-xxhash (xxHash's
// own Python binding). And the alignment of an engine's KV events (KvRouterAlignment) gives the router
// the same hashes for the blocks an engine stored as it computes from a prompt's tokens, with what
// cannot be matched counted by its reason.
#include <QtTest>

#include <QProcess>
#include <numeric>

#include "core/live/KvRouterAlignment.h"
#include "core/router/TokenBlockHash.h"

using namespace kvscope;

namespace {

// Dynamo's compute_block_hash_for_seq + compute_seq_hash_for_block, in Python.
constexpr const char* kDynamoPy = R"(
import struct, sys, xxhash
bs = int(sys.argv[1]); tokens = [int(t) for t in sys.argv[2:]]
seq = []
for i in range(0, len(tokens) - bs + 1, bs):
    local = xxhash.xxh3_64_intdigest(struct.pack('<%dI' % bs, *tokens[i:i + bs]), seed=1337)
    seq.append(local if not seq else xxhash.xxh3_64_intdigest(struct.pack('<2Q', seq[-1], local), seed=1337))
print(' '.join(str(h) for h in seq))
)";

std::vector<BlockHash> dynamo(int block_size, const std::vector<std::uint32_t>& tokens) {
  QStringList args{"-c", kDynamoPy, QString::number(block_size)};
  for (auto t : tokens) args << QString::number(t);
  QProcess p;
  p.start("/usr/bin/python3", args);
  if (!p.waitForFinished(60000) || p.exitCode() != 0)
    qFatal("python3 xxhash: %s", p.readAllStandardError().constData());
  std::vector<BlockHash> out;
  for (const QByteArray& h : p.readAllStandardOutput().trimmed().split(' '))
    if (!h.isEmpty()) out.push_back(h.toULongLong());
  return out;
}

std::vector<std::uint32_t> range(std::uint32_t from, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

KvBlockStored stored(std::vector<KvBlockKey> keys, std::optional<KvBlockKey> parent,
                     const std::vector<std::uint32_t>& tokens, std::int64_t block_size) {
  KvBlockStored s;
  s.blocks = std::move(keys);
  s.parent = parent;
  s.token_ids.assign(tokens.begin(), tokens.end());
  s.block_size = block_size;
  s.medium = "GPU";
  return s;
}

KvEventBatch batch(std::vector<KvCacheEvent> events) {
  KvEventBatch b;
  b.events = std::move(events);
  return b;
}

}  // namespace

class TestTokenBlockHash : public QObject {
  Q_OBJECT
 private slots:
  void sameAsDynamo_data() {
    QTest::addColumn<int>("block_size");
    QTest::addColumn<int>("tokens");
    QTest::newRow("one block of 4") << 4 << 4;
    QTest::newRow("16-token blocks, a partial tail") << 16 << 70;
    QTest::newRow("vLLM's 16 x 8") << 16 << 128;
    QTest::newRow("router's 24") << 24 << 100;
  }
  void sameAsDynamo() {
    QFETCH(int, block_size);
    QFETCH(int, tokens);
    const auto t = range(151643, static_cast<std::size_t>(tokens));  // token ids past 2^16, as Qwen's are
    const auto ours = tokenBlockHashes(t, block_size);
    QCOMPARE(ours.size(), static_cast<std::size_t>(tokens / block_size));
    QCOMPARE(ours, dynamo(block_size, t));
  }

  void aPrefixIsAPrefixAndTheChainRemembersIt() {
    const auto a = range(1, 64), b = range(1, 48);
    auto c = range(1, 64);
    c[0] = 999;  // only the first token differs
    const auto ha = tokenBlockHashes(a, 16), hb = tokenBlockHashes(b, 16), hc = tokenBlockHashes(c, 16);
    QVERIFY(std::equal(hb.begin(), hb.end(), ha.begin()));
    for (std::size_t i = 0; i < ha.size(); ++i) QVERIFY(ha[i] != hc[i]);  // the same block later in another chain
    QVERIFY(tokenBlockHashes(a, 0).empty());
    QVERIFY(tokenBlockHashes(range(1, 15), 16).empty());
  }

  // An engine stores a prompt's blocks in two events (a chain and its continuation, with the engine's
  // own hashes): the router gets exactly the hashes it computes from the prompt's tokens.
  void engineBlocksGetTheRoutersHashes() {
    const auto prompt = range(500, 64);
    const auto want = tokenBlockHashes(prompt, 16);
    KvRouterAlignment a(2, 16);
    const std::vector<std::uint32_t> first(prompt.begin(), prompt.begin() + 32),
        rest(prompt.begin() + 32, prompt.end());
    auto u = a.apply(1, batch({stored({0xA1, 0xA2}, std::nullopt, first, 16)}));
    QCOMPARE(u.stored, std::vector<BlockHash>(want.begin(), want.begin() + 2));
    u = a.apply(1, batch({stored({0xA3, 0xA4}, 0xA2, rest, 16)}));
    QCOMPARE(u.stored, std::vector<BlockHash>(want.begin() + 2, want.end()));
    QCOMPARE(a.counts(1).aligned, std::uint64_t{4});
    // Removal by the engine's keys gives back the router's hashes; a clear gives the rest.
    KvBlockRemoved r;
    r.blocks = {0xA4, 0xFF};  // 0xFF was never aligned
    u = a.apply(1, batch({r}));
    QCOMPARE(u.removed, std::vector<BlockHash>{want[3]});
    u = a.apply(1, batch({KvAllBlocksCleared{}}));
    QCOMPARE(u.removed.size(), std::size_t{3});
    QVERIFY(a.apply(0, batch({})).stored.empty());
  }

  // The router is told removals before stores: a block stored and evicted in one batch is neither.
  void aBlockStoredAndRemovedInOneBatchIsNotStored() {
    KvRouterAlignment a(1, 16);
    const auto t = range(1, 32);
    KvBlockRemoved r;
    r.blocks = {0xB2};
    const auto u = a.apply(0, batch({stored({0xB1, 0xB2}, std::nullopt, t, 16), r}));
    QCOMPARE(u.stored, std::vector<BlockHash>{tokenBlockHashes(t, 16)[0]});
    QVERIFY(u.removed.empty());
    const auto cleared = a.apply(0, batch({stored({0xC1}, std::nullopt, range(900, 16), 16), KvAllBlocksCleared{}}));
    QVERIFY(cleared.stored.empty());
    QCOMPARE(cleared.removed, std::vector<BlockHash>{tokenBlockHashes(t, 16)[0]});
  }

  void whatCannotBeMatchedIsCountedByReason() {
    KvRouterAlignment a(1, 16);
    const auto t = range(1, 32);
    KvBlockStored no_tokens = stored({1, 2}, std::nullopt, {}, 16);
    KvBlockStored other_size = stored({3}, std::nullopt, range(1, 32), 32);
    KvBlockStored orphan = stored({4, 5}, 0x77, t, 16);  // its parent came before we attached
    KvBlockStored lora = stored({6, 7}, std::nullopt, t, 16);
    lora.lora_name = "adapter-a";
    KvBlockStored cpu = stored({8, 9}, std::nullopt, t, 16);
    cpu.medium = "CPU";
    const auto u = a.apply(0, batch({no_tokens, other_size, orphan, lora, cpu}));
    QVERIFY(u.stored.empty());
    const auto& c = a.counts(0);
    QCOMPARE(c.no_tokens, std::uint64_t{2});
    QCOMPARE(c.other_size, std::uint64_t{1});
    QCOMPARE(c.unknown_parent, std::uint64_t{2});
    QCOMPARE(c.lora, std::uint64_t{2});
    QCOMPARE(c.aligned, std::uint64_t{0});
    QCOMPARE(c.last_block_size, std::int64_t{16});
  }
};

QTEST_GUILESS_MAIN(TestTokenBlockHash)
#include "test_token_block_hash.moc"
