// KvEventDecoder against payloads written as each engine's encoder writes them
// (tests/data/kv_events/make_fixtures.py names the upstream file and commit of each): SGLang's
// array form before and after attn_dp_rank, vLLM's array form with medium, vLLM's map form with
// sha256 byte-string hashes; then what no engine writes: bad msgpack, wrong types, bombs.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/live/KvEventDecoder.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;

namespace {

std::string payload(const std::string& name) {
  std::ifstream in(kvscope::test::testDataPath("kv_events/" + name), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

KvEventBatch decoded(const std::string& bytes) {
  std::string error;
  auto b = KvEventDecoder::decode(bytes.data(), bytes.size(), &error);
  if (!b) qFatal("%s", error.c_str());
  return *b;
}

std::string failure(const std::string& bytes) {
  std::string error;
  return KvEventDecoder::decode(bytes.data(), bytes.size(), &error) ? std::string("decoded") : error;
}

// The first 8 bytes of sha256(label), big-endian: the key of a vLLM byte-string hash.
constexpr KvBlockKey kB1 = 0x7dc96f776c8423e5ULL, kB2 = 0x4814d92093ac8a0fULL;

}  // namespace

class TestKvEventDecoder : public QObject {
  Q_OBJECT
 private slots:
  void sglangArrayFormWithoutRank() {
    const KvEventBatch b = decoded(payload("sglang-array-v0.msgpack"));
    QCOMPARE(b.ts, 1767225600.25);
    QVERIFY(!b.dp_rank);
    QCOMPARE(b.events.size(), std::size_t{4});
    const auto& s = std::get<KvBlockStored>(b.events[0]);
    QCOMPARE(s.blocks, (std::vector<KvBlockKey>{101, 102}));
    QVERIFY(!s.parent);
    QCOMPARE(s.token_ids.size(), std::size_t{32});
    QCOMPARE(s.token_ids.front(), std::int64_t{1000});
    QCOMPARE(s.block_size, std::int64_t{16});
    QCOMPARE(s.medium, std::string());
    const auto& chained = std::get<KvBlockStored>(b.events[1]);
    QCOMPARE(chained.parent.value_or(0), KvBlockKey{102});
    QCOMPARE(std::get<KvBlockRemoved>(b.events[2]).blocks, std::vector<KvBlockKey>{101});
    QVERIFY(std::holds_alternative<KvAllBlocksCleared>(b.events[3]));
    QVERIFY(b.unknown_kinds.empty());
  }

  void sglangArrayFormWithRankAndSignedHashes() {
    const KvEventBatch b = decoded(payload("sglang-array-rank.msgpack"));
    QCOMPARE(b.dp_rank.value_or(-1), std::int64_t{1});
    const auto& s = std::get<KvBlockStored>(b.events[0]);
    QCOMPARE(s.blocks[0], static_cast<KvBlockKey>(std::int64_t{-7}));  // Python's negative hash, two's complement
    QCOMPARE(s.blocks[1], KvBlockKey{9223372036854775807ULL});
    QCOMPARE(std::get<KvBlockRemoved>(b.events[1]).blocks[0], static_cast<KvBlockKey>(std::int64_t{-7}));
  }

  void vllmArrayFormWithMediumSkipsAnUnknownKind() {
    const KvEventBatch b = decoded(payload("vllm-array-medium.msgpack"));
    QCOMPARE(b.dp_rank.value_or(-1), std::int64_t{0});
    QCOMPARE(b.events.size(), std::size_t{2});
    const auto& s = std::get<KvBlockStored>(b.events[0]);
    QCOMPARE(s.parent.value_or(0), KvBlockKey{500});
    QCOMPARE(s.medium, std::string("GPU"));
    QCOMPARE(std::get<KvBlockRemoved>(b.events[1]).medium, std::string("GPU"));
    QCOMPARE(b.unknown_kinds, std::vector<std::string>{"BlockTransferred"});
  }

  void vllmMapFormWithByteHashes() {
    const KvEventBatch b = decoded(payload("vllm-map-bytes.msgpack"));
    QCOMPARE(b.dp_rank.value_or(-1), std::int64_t{2});
    QCOMPARE(b.events.size(), std::size_t{4});
    const auto& s = std::get<KvBlockStored>(b.events[0]);
    QCOMPARE(s.blocks, (std::vector<KvBlockKey>{kB1, kB2}));
    QCOMPARE(s.medium, std::string("GPU"));
    QVERIFY(!s.group_idx);
    const auto& next = std::get<KvBlockStored>(b.events[1]);
    QCOMPARE(next.parent.value_or(0), kB2);
    QCOMPARE(next.lora_name, std::string("adapter-a"));
    QCOMPARE(next.group_idx.value_or(-1), std::int64_t{1});
    QCOMPARE(std::get<KvBlockRemoved>(b.events[2]).blocks, std::vector<KvBlockKey>{kB1});
    QVERIFY(std::holds_alternative<KvAllBlocksCleared>(b.events[3]));
  }

  // A newer engine that appends a field (SGLang's typed metadata sits where vLLM has lora_name)
  // still reads; the field is skipped.
  void appendedFieldsAreSkipped() {
    // [ts, [["BlockStored", [1], nil, [], 16, nil, nil, ["salt"]]]]: SGLang's BlockStoredWithMetadata.
    const std::string bytes(
        "\x92\xcb\x41\xda\x54\x4f\x00\x00\x00\x00\x91\x98\xab"
        "BlockStored"
        "\x91\x01\xc0\x90\x10\xc0\xc0\x91\xa4salt",
        37);
    const KvEventBatch b = decoded(bytes);
    const auto& s = std::get<KvBlockStored>(b.events.at(0));
    QCOMPARE(s.blocks, std::vector<KvBlockKey>{1});
    QCOMPARE(s.lora_name, std::string());
  }

  void whatNoEngineWritesIsAnErrorNamingTheField_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("error");
    QTest::newRow("empty") << QByteArray() << "not msgpack";
    QTest::newRow("truncated") << QByteArray("\x92\xcb\x41", 3) << "not msgpack";
    QTest::newRow("trailing bytes") << QByteArray("\x92\x00\x90\x00", 4) << "1 bytes after the batch";
    QTest::newRow("a string") << QByteArray("\xa1x", 2) << "batch: expected an array or map, got str";
    QTest::newRow("short batch") << QByteArray("\x91\x00", 2) << "got 1 elements";
    QTest::newRow("events not a list") << QByteArray("\x92\x00\x05", 3) << "events: expected an array, got int";
    QTest::newRow("block_size a string") << QByteArray(
                                                "\x92\x00\x91\x95\xab"
                                                "BlockStored"
                                                "\x90\xc0\x90\xa1x",
                                                21)
                                         << "events[0] (BlockStored): block_size: expected an integer, got str";
    QTest::newRow("block_size zero") << QByteArray(
                                            "\x92\x00\x91\x95\xab"
                                            "BlockStored"
                                            "\x90\xc0\x90\x00",
                                            20)
                                     << "block_size: 0 is not positive";
    QTest::newRow("hash a string") << QByteArray(
                                          "\x92\x00\x91\x92\xac"
                                          "BlockRemoved"
                                          "\x91\xa1x",
                                          20)
                                   << "block_hashes[0]: expected a block hash (int or bytes), got str";
    QTest::newRow("missing block_size") << QByteArray(
                                               "\x92\x00\x91\x92\xab"
                                               "BlockStored"
                                               "\x90",
                                               17)
                                        << "block_size is missing";
    QTest::newRow("map without type") << QByteArray("\x92\x00\x91\x80", 4) << "events[0]: type is missing";
    QTest::newRow("map batch without events") << QByteArray("\x81\xa2ts\x00", 5) << "batch: events is missing";
    QTest::newRow("empty event") << QByteArray("\x92\x00\x91\x90", 4) << "an empty event";
    // An array header claiming 4 billion elements in 10 bytes: refused by the limits, nothing allocated.
    QTest::newRow("array bomb") << QByteArray("\x92\x00\xdd\xff\xff\xff\xff\x00\x00\x00", 10) << "not msgpack";
  }
  void whatNoEngineWritesIsAnErrorNamingTheField() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, error);
    const std::string got = failure(bytes.toStdString());
    QVERIFY2(got.find(error.toStdString()) != std::string::npos, got.c_str());
  }
};

QTEST_GUILESS_MAIN(TestKvEventDecoder)
#include "test_kv_event_decoder.moc"
