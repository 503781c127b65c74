// KvEventSubscriber against a real ZMQ publisher that behaves on the wire as vLLM's and SGLang's
// ZmqEventPublisher (tests/backend/kv_event_publisher.py: PUB [topic, seq, payload] and a ROUTER
// replay socket), sending the engines' own payloads (tests/data/kv_events). The test stages what a
// subscriber meets: batches sent before its subscription took, one dropped by the PUB socket but
// still in the replay buffer, one gone from both, a duplicate, a payload that is not a batch, the
// publisher going away, and an engine restarted on the same ports numbering from 0 again.
#include <QtTest>

#include <mutex>

#include "backend/live/KvEventSubscriber.h"
#include "tests/support/KvEventPublisher.h"

using namespace kvscope;
using kvscope::test::Publisher;

namespace {

struct Seen {
  std::mutex mutex;
  std::vector<std::uint64_t> seqs;
  std::vector<std::size_t> events;
  std::vector<std::string> gaps;
  std::vector<std::uint64_t> undecodable;
  bool reachable = false;
  int restarts = 0;
  std::string why;
  template <class F>
  auto with(F f) {
    std::lock_guard lock(mutex);
    return f();
  }
};

}  // namespace

class TestKvEventSubscriber : public QObject {
  Q_OBJECT
 private slots:
  void gapsDuplicatesLossesAndARestart() {
    Publisher publisher;
    QVERIFY2(!publisher.pub.empty(), "the publisher did not start (python3-zmq)");
    Seen seen;
    KvEventSubscriber::Listener listener;
    listener.batch = [&](std::uint64_t seq, KvEventBatch b) {
      seen.with([&] {
        seen.seqs.push_back(seq);
        seen.events.push_back(b.events.size());
      });
    };
    listener.gap = [&](std::uint64_t first, std::uint64_t last, const std::string& why) {
      seen.with([&] { seen.gaps.push_back(std::to_string(first) + "-" + std::to_string(last) + ": " + why); });
    };
    listener.health = [&](bool reachable, const std::string& why) {
      seen.with([&] {
        seen.reachable = reachable;
        seen.why = why;
      });
    };
    listener.undecodable = [&](std::uint64_t seq, const std::string&) {
      seen.with([&] { seen.undecodable.push_back(seq); });
    };
    listener.restarted = [&] { seen.with([&] { ++seen.restarts; }); };
    KvEventSubscriber subscriber({publisher.pub, publisher.replay, "kv-events"}, listener);
    subscriber.start();
    QTRY_VERIFY_WITH_TIMEOUT(seen.with([&] { return seen.reachable; }), 10000);

    // 0-2 may go out before the subscription reaches the PUB socket (ZMQ's slow joiner): the
    // subscriber learns them from the replay buffer when it attaches.
    const QString sglang = publisher.fixture("sglang-array-v0.msgpack"),
                  vllm = publisher.fixture("vllm-map-bytes.msgpack");
    QVERIFY(publisher.send("publish 0 " + sglang));
    QVERIFY(publisher.send("publish 1 " + vllm));
    QVERIFY(publisher.send("publish 2 " + sglang));
    QTest::qWait(300);
    QVERIFY(publisher.send("buffer-only 3 " + vllm));  // dropped on the way, still replayable
    QVERIFY(publisher.send("publish 4 " + sglang));
    QTRY_VERIFY_WITH_TIMEOUT(seen.with([&] { return seen.seqs.size() >= 5; }), 10000);
    // 5 is gone from both: a gap, said once, with why.
    QVERIFY(publisher.send("publish 6 " + vllm));
    QVERIFY(publisher.send("resend 2"));
    QVERIFY(publisher.send("raw 7 a178"));  // a msgpack string, not a batch
    QVERIFY(publisher.send("publish 8 " + sglang));
    QTRY_VERIFY_WITH_TIMEOUT(seen.with([&] { return !seen.seqs.empty() && seen.seqs.back() == 8; }), 10000);

    seen.with([&] {
      QCOMPARE(seen.seqs, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 6, 8}));
      QCOMPARE(seen.events.at(0), std::size_t{4});  // the SGLang fixture's four events
      QCOMPARE(seen.events.at(1), std::size_t{4});  // the vLLM map fixture's four
      QCOMPARE(seen.gaps.size(), std::size_t{1});
      QVERIFY2(seen.gaps[0].rfind("5-5: ", 0) == 0, seen.gaps[0].c_str());
      QCOMPARE(seen.undecodable, std::vector<std::uint64_t>{7});
    });
    const auto c = subscriber.counts();
    QCOMPARE(c.batches, std::uint64_t{7});
    QCOMPARE(c.lost, std::uint64_t{1});
    QVERIFY(c.duplicates >= 1);  // the resent 2
    QVERIFY(c.replayed >= 1);    // 3 at least

    // The publisher goes away: unreachable, with the reason.
    publisher.quit();
    QTRY_VERIFY_WITH_TIMEOUT(seen.with([&] { return !seen.reachable; }), 10000);
    seen.with([&] { QVERIFY2(seen.why.find(publisher.pub) != std::string::npos, seen.why.c_str()); });

    // The engine restarts on the same ports and numbers from 0 again: not duplicates of what came
    // before, but a new start, said once and followed (its batch 0 from replay if the PUB dropped it).
    Publisher again(publisher.ports());
    QVERIFY2(again.pub == publisher.pub, again.pub.c_str());
    QTRY_VERIFY_WITH_TIMEOUT(seen.with([&] { return seen.reachable; }), 15000);
    // After a reconnect only a live batch tells a restart from the same publisher: give the
    // subscription time to reach the new PUB socket (ZMQ's slow joiner) before it sends.
    QTest::qWait(500);
    QVERIFY(again.send("publish 0 " + sglang));
    QVERIFY(again.send("publish 1 " + vllm));
    QTRY_VERIFY_WITH_TIMEOUT(seen.with([&] { return seen.seqs.size() >= 9 && seen.seqs.back() == 1; }), 10000);
    seen.with([&] {
      QCOMPARE(seen.restarts, 1);
      QCOMPARE(std::vector<std::uint64_t>(seen.seqs.end() - 2, seen.seqs.end()), (std::vector<std::uint64_t>{0, 1}));
    });
    QCOMPARE(subscriber.counts().restarts, std::uint64_t{1});
    subscriber.stop();
  }

  // No publisher at all: unreachable with the address, retried (not an error that ends it).
  void anEndpointNobodyServesIsUnreachable() {
    Seen seen;
    KvEventSubscriber::Listener listener;
    listener.health = [&](bool reachable, const std::string& why) {
      seen.with([&] {
        seen.reachable = reachable;
        seen.why = why;
      });
    };
    KvEventSubscriber subscriber({"tcp://127.0.0.1:1", "", ""}, listener);
    subscriber.start();
    QTRY_VERIFY_WITH_TIMEOUT(seen.with([&] { return seen.why.find("tcp://127.0.0.1:1") != std::string::npos; }), 10000);
    QVERIFY(!seen.with([&] { return seen.reachable; }));
    subscriber.stop();
  }
};

QTEST_GUILESS_MAIN(TestKvEventSubscriber)
#include "test_kv_event_subscriber.moc"
