// A live cluster watched through its engines' KV events: the cluster file gives D0 a kv_events
// endpoint (and no /metrics), a real ZMQ publisher that behaves as vLLM's and SGLang's sends the
// SGLang payload fixture (two stores, a removal, a clear), and the cluster's stream then holds the
// evictions with their tokens, snapshots with D0's KV use from the blocks it holds, and D0's health
// from its feed. A bad kv_events entry in the cluster file is refused with its line and field.
#include <QtTest>

#include <QTemporaryDir>
#include <fstream>
#include <mutex>

#include <msgpack.hpp>

#include "backend/live/LiveSession.h"
#include "core/live/ClusterConfigLoader.h"
#include "core/router/TokenBlockHash.h"
#include "core/run/LiveRouter.h"
#include "tests/support/KvEventPublisher.h"
#include "tests/support/LockedEventLog.h"

using namespace kvscope;
using kvscope::test::Publisher;
using Collect = kvscope::test::LockedEventLog;

namespace {

// One KVEventBatch [ts, [BlockStored]] as vLLM's array form packs it (the engine's own hashes,
// parent, token ids, block size, no LoRA), as hex for the publisher's `raw` command.
QString storedBatchHex(const std::vector<std::uint64_t>& engine_hashes, std::optional<std::uint64_t> parent,
                       const std::vector<std::uint32_t>& tokens, int block_size) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(2);
  pk.pack(1.5);
  pk.pack_array(1);
  pk.pack_array(6);
  pk.pack(std::string("BlockStored"));
  pk.pack(engine_hashes);
  if (parent)
    pk.pack(*parent);
  else
    pk.pack_nil();
  pk.pack(tokens);
  pk.pack(block_size);
  pk.pack_nil();
  return QByteArray(buf.data(), static_cast<int>(buf.size())).toHex();
}

std::vector<std::uint32_t> prompt(std::uint32_t from, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from + static_cast<std::uint32_t>(i);
  return v;
}

}  // namespace

class TestLiveKvEvents : public QObject {
  Q_OBJECT
 private slots:
  // cache_view = exact on the real cluster: the router's view of D0's cache comes from D0's own KV
  // events, matched by the tokens they carry (the engine's hashes are its own). A prompt whose first
  // 32 tokens D0 stored sees 32 cached tokens there and none on D1; another prompt sees none; after
  // D0 evicts one block the router sees 16.
  void theRouterSeesTheEnginesCache() {
    Publisher publisher;
    QVERIFY2(!publisher.pub.empty(), "the publisher did not start (python3-zmq)");
    QTemporaryDir dir;
    const std::string file = dir.filePath("cluster.yaml").toStdString();
    std::ofstream(dir.filePath("d1.log").toStdString()) << "";
    std::ofstream(file) << "name: exact\nscrape_interval_s: 0.1\n"
                           "router: {policy: linear, block_size: 16, knobs: {cache_view: 0}}\nworkers:\n"
                           "  - id: D0\n    role: decode\n    kv_capacity_tokens: 100000\n"
                           "    kv_events: {endpoint: "
                        << publisher.pub << ", replay: " << publisher.replay
                        << ", topic: kv-events}\n"
                           "  - id: D1\n    role: decode\n    kv_capacity_tokens: 100000\n    logs: d1.log\n";
    Collect sink;
    LiveSession::Options options;
    std::mutex warned_mutex;
    std::vector<std::string> warned;
    options.warn = [&](const std::string& w) {
      std::lock_guard lock(warned_mutex);
      warned.push_back(w);
    };
    LiveSession session(ClusterConfigLoader::load(file), {&sink}, options);
    session.start();
    QTRY_VERIFY_WITH_TIMEOUT(session.statuses().at(0).health == WorkerHealth::Ok, 10000);

    const auto tokens = prompt(151643, 48);
    const std::vector<std::uint32_t> first32(tokens.begin(), tokens.begin() + 32);
    QVERIFY(publisher.send("raw 0 " + storedBatchHex({0xE1, 0xE2}, std::nullopt, first32, 16)));
    QTRY_VERIFY_WITH_TIMEOUT(
        session.kvEventStatus().at(0).alignment && session.kvEventStatus().at(0).alignment->aligned == 2, 10000);

    const auto cachedOn = [&](const std::vector<std::uint32_t>& p, RequestId id) {
      LiveRouter::RouteInput in;
      in.request = id;
      in.session = id;
      in.input_tokens = static_cast<std::int64_t>(p.size());
      in.hashes = tokenBlockHashes(p, 16);
      const LiveRouter::RouteResult r = session.router()->route(in);
      std::map<WorkerId, double> hit;
      for (const auto& c : r.decision.candidates) hit[c.worker] = c.component("cache_hit");
      return hit;
    };
    auto hit = cachedOn(tokens, 1);
    QCOMPARE(hit[0], 32.0);
    QCOMPARE(hit[1], 0.0);
    QCOMPARE(cachedOn(prompt(7, 48), 2)[0], 0.0);

    // The engine evicts its second block: ["BlockRemoved", [0xE2], nil] in [ts, [event]].
    QVERIFY(publisher.send("raw 1 92cb3ff80000000000009193ac426c6f636b52656d6f76656491cce2c0"));
    QTRY_COMPARE_WITH_TIMEOUT(cachedOn(tokens, 3)[0], 16.0, 10000);

    // An engine with another block size cannot be matched: said once, with what to change.
    QVERIFY(publisher.send("raw 2 " + storedBatchHex({0xF1}, std::nullopt, prompt(1, 32), 32)));
    QTRY_VERIFY_WITH_TIMEOUT(session.kvEventStatus().at(0).alignment->other_size == 1, 10000);
    {
      std::lock_guard lock(warned_mutex);
      QCOMPARE(warned.size(), std::size_t{1});
      QVERIFY2(warned[0].find("1 blocks of 32 tokens, the router's block_size is 16") != std::string::npos,
               warned[0].c_str());
    }
    session.stop();
  }

  void evictionsAndKvUseFromTheEngineEvents() {
    Publisher publisher;
    QVERIFY2(!publisher.pub.empty(), "the publisher did not start (python3-zmq)");
    QTemporaryDir dir;
    const std::string file = dir.filePath("cluster.yaml").toStdString();
    std::ofstream(file) << "name: kv-events\nscrape_interval_s: 0.1\nworkers:\n"
                           "  - id: D0\n    role: decode\n    kv_capacity_tokens: 1000\n"
                           "    kv_events: {endpoint: "
                        << publisher.pub << ", replay: " << publisher.replay << ", topic: kv-events}\n";
    Collect sink;
    LiveSession session(ClusterConfigLoader::load(file), {&sink});
    session.start();
    QTRY_VERIFY_WITH_TIMEOUT(session.statuses().at(0).health == WorkerHealth::Ok, 10000);

    // The fixture's first two events (stores of 101, 102, then 103: 48 tokens) as batch 0, then the
    // removal and the clear as batch 1, from hand-written payloads in the same (SGLang) form.
    const QString stores = QString::fromStdString(kvscope::test::testDataPath("kv_events/sglang-array-v0.msgpack"));
    QVERIFY(publisher.send("publish 0 " + stores));
    QTRY_VERIFY_WITH_TIMEOUT(!session.kvEventStatus().empty() && session.kvEventStatus()[0].counts.batches == 1, 10000);
    const auto status = session.kvEventStatus().at(0);
    QCOMPARE(status.worker, std::string("D0"));
    QVERIFY(status.reachable);
    QCOMPARE(status.blocks, std::size_t{0});  // the fixture ends with a clear

    // The two evictions, in the stream: 16 tokens (block 101), then the 32 left at the clear.
    QTRY_COMPARE_WITH_TIMEOUT(sink.of<Eviction>().size(), std::size_t{2}, 5000);
    const auto evictions = sink.of<Eviction>();
    QCOMPARE(evictions[0].worker, 0);
    QCOMPARE(evictions[0].tokens_freed, std::int64_t{16});
    QCOMPARE(evictions[0].granularity, EvictionGranularity::Block);
    QCOMPARE(evictions[1].tokens_freed, std::int64_t{32});

    // Stores alone (batch 2, a stored chain of two blocks): D0's snapshots show the 32 tokens held.
    // ["BlockStored", [7, 8], nil, [], 16, nil] in [ts, [event]].
    QVERIFY(publisher.send("raw 1 92cb41da556e401000009196ab426c6f636b53746f726564920708c09010c0"));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          const auto snaps = sink.of<Snapshot>();
          return !snaps.empty() && snaps.back().workers.at(0).kv_used == 32;
        }(),
        10000);
    QCOMPARE(sink.of<Snapshot>().back().workers.at(0).kv_capacity, std::int64_t{1000});
    QCOMPARE(sink.of<Snapshot>().back().workers.at(0).kv_event_blocks, std::int64_t{2});
    // The churn so far: 3 + 2 blocks stored, 1 removed and 2 cleared.
    QCOMPARE(sink.of<Snapshot>().back().workers.at(0).kv_event_stored, std::int64_t{5});
    QCOMPARE(sink.of<Snapshot>().back().workers.at(0).kv_event_removed, std::int64_t{3});
    session.stop();
  }

  void badEndpointsAreRefusedWithTheField_data() {
    QTest::addColumn<QString>("entry");
    QTest::addColumn<QString>("error");
    QTest::newRow("wildcard") << "{endpoint: 'tcp://*:5557'}"
                              << "field 'workers[0].kv_events.endpoint': expected tcp://HOST:PORT";
    QTest::newRow("no port") << "{endpoint: 'tcp://10.0.0.1'}"
                             << "expected tcp://HOST:PORT";
    QTest::newRow("http") << "{endpoint: 'http://10.0.0.1:5557'}"
                          << "expected tcp://HOST:PORT";
    QTest::newRow("no endpoint") << "{replay: 'tcp://10.0.0.1:5558'}"
                                 << "expected an 'endpoint'";
    QTest::newRow("unknown key") << "{endpoint: 'tcp://10.0.0.1:5557', hwm: 5}"
                                 << "hwm";
    QTest::newRow("bad replay in a list") << "[{endpoint: 'tcp://10.0.0.1:5557', replay: 'x'}]"
                                          << "field 'workers[0].kv_events[0].replay': expected tcp://HOST:PORT";
  }
  void badEndpointsAreRefusedWithTheField() {
    QFETCH(QString, entry);
    QFETCH(QString, error);
    const std::string text = "workers:\n  - {id: D0, role: decode, kv_events: " + entry.toStdString() + "}\n";
    std::string got = "accepted";
    try {
      ClusterConfigLoader::parse(text, "c.yaml");
    } catch (const std::exception& e) {
      got = e.what();
    }
    QVERIFY2(got.find(error.toStdString()) != std::string::npos, got.c_str());
  }
};

QTEST_GUILESS_MAIN(TestLiveKvEvents)
#include "test_live_kv_events.moc"
