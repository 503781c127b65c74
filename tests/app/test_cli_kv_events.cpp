// `kvscope-cli kv-events` end to end: the real binary subscribed to a real ZMQ publisher that
// behaves as vLLM's and SGLang's (tests/support/KvEventPublisher.h) prints each decoded event of the
// engines' payload fixtures, a dropped batch that only replay recovers (one revealed by the next
// batch, one at the tail that only the idle probe finds), and on SIGTERM the
// summary of what each endpoint holds. Bad endpoints are usage errors.
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <csignal>

#include "tests/support/CliRunner.h"
#include "tests/support/KvEventPublisher.h"

using namespace kvscope::test;

class TestCliKvEvents : public QObject {
  Q_OBJECT
 private slots:
  void printsWhatTheEnginesPublish() {
    Publisher publisher;
    QVERIFY(!publisher.pub.empty());
    QProcess cli;
    cli.start(KVSCOPE_CLI, {"kv-events", QString::fromStdString(publisher.pub), "--replay",
                            QString::fromStdString(publisher.replay), "--topic", "kv-events", "--format", "jsonl"});
    QVERIFY(cli.waitForStarted(kTimeoutMs));
    QByteArray out;
    auto readUntil = [&](const QByteArray& needle) {
      for (int i = 0; i < 100 && !out.contains(needle); ++i) {
        cli.waitForReadyRead(100);
        out += cli.readAllStandardOutput();
      }
      return out.contains(needle);
    };
    QVERIFY2(readUntil("\"reachable\":true"), out.constData());
    QVERIFY(publisher.send("publish 0 " + publisher.fixture("sglang-array-v0.msgpack")));
    QVERIFY(publisher.send("buffer-only 1 " + publisher.fixture("vllm-array-medium.msgpack")));  // only replay has it
    QVERIFY(publisher.send("publish 2 " + publisher.fixture("vllm-map-bytes.msgpack")));
    QVERIFY2(readUntil("\"seq\":2"), out.constData());
    // The last batch is dropped on the way and nothing follows it: only the idle probe of the
    // replay socket (after a second of silence) brings it.
    QVERIFY(publisher.send("buffer-only 3 " + publisher.fixture("sglang-array-v0.msgpack")));
    QVERIFY2(readUntil("\"seq\":3"), out.constData());
    ::kill(static_cast<pid_t>(cli.processId()), SIGTERM);
    QVERIFY(cli.waitForFinished(kTimeoutMs));
    QCOMPARE(cli.exitCode(), 0);
    out += cli.readAllStandardOutput();

    const auto all = jsonLines(out);
    QStringList kinds;
    QJsonObject first_stored, summary, unknown;
    for (const auto& o : all) {
      kinds << o.value("kind").toString() + "@" + QString::number(o.value("seq").toInt(-1));
      if (o.value("kind") == "stored" && first_stored.isEmpty()) first_stored = o;
      if (o.value("kind") == "summary") summary = o;
      if (o.value("kind") == "unknown") unknown = o;
    }
    // Batch 0's four events, 1's two (and its unknown kind) through replay, 2's four, in order.
    const QStringList expected{"health@-1", "stored@0",  "stored@0",  "removed@0", "cleared@0", "stored@1",
                               "removed@1", "unknown@1", "stored@2",  "stored@2",  "removed@2", "cleared@2",
                               "stored@3",  "stored@3",  "removed@3", "cleared@3", "summary@-1"};
    QCOMPARE(kinds, expected);
    QCOMPARE(first_stored.value("hashes").toVariant().toStringList(),
             (QStringList{"0000000000000065", "0000000000000066"}));
    QCOMPARE(first_stored.value("tokens").toInt(), 32);
    QCOMPARE(first_stored.value("block_size").toInt(), 16);
    QCOMPARE(unknown.value("name").toString(), QString("BlockTransferred"));
    QCOMPARE(summary.value("batches").toInt(), 4);
    QVERIFY(summary.value("replayed").toInt() >= 2);  // 1 and 3 at least (0 and 2 too if the subscription was late)
    QCOMPARE(summary.value("lost").toInt(), 0);
    QCOMPARE(summary.value("cached_blocks").toInt(), 0);  // batch 2 ends with a clear
    QCOMPARE(summary.value("cleared").toInt(), 3);
  }

  void badEndpointsAreUsageErrors() {
    RUN_EXPECT(wild, 2, QStringList{"kv-events", "tcp://*:5557"});
    QVERIFY2(wild.err.contains("wildcard"), wild.err.constData());
    RUN_EXPECT(replays, 2,
               QStringList{"kv-events", "tcp://127.0.0.1:1", "--replay", "tcp://127.0.0.1:2", "--replay",
                           "tcp://127.0.0.1:3"});
    QVERIFY2(replays.err.contains("--replay given 2 times for 1 endpoints"), replays.err.constData());
    // Nobody there: said, and --for ends it with the summary.
    RUN_EXPECT(nobody, 0, QStringList{"kv-events", "tcp://127.0.0.1:1", "--for", "1.5"});
    QVERIFY2(nobody.out.contains("\"reachable\":false"), nobody.out.constData());
    QVERIFY2(nobody.out.contains("\"kind\":\"summary\""), nobody.out.constData());
  }
};

QTEST_GUILESS_MAIN(TestCliKvEvents)
#include "test_cli_kv_events.moc"
