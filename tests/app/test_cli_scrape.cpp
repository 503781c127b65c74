// `kvscope-cli scrape` end to end: the real binary reads upstream-exact /metrics answers of vLLM and
// SGLang (tests/data/upstream_metrics) from files and from a real HTTP server (Python's http.server),
// prints what it understood and what it did not, and says why a source could not be read.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

namespace {
QString fixture(const char* name) {
  return QString::fromStdString(kvscope::test::testDataPath(std::string("upstream_metrics/") + name));
}
}  // namespace

class TestCliScrape : public QObject {
  Q_OBJECT
 private slots:
  void filesOfBothEnginesAreRecognised() {
    RUN_EXPECT(
        r, 0, QStringList{"scrape", fixture("vllm_v0_18.prom"), fixture("sglang_decode_new.prom"), "--format", "json"});
    const auto all = jsonLines(r.out);
    QCOMPARE(all.size(), 2);
    const QJsonObject vllm = all[0], sglang = all[1];
    QCOMPARE(vllm["engine"].toString(), QString("vllm"));
    QCOMPARE(vllm["gauges"].toObject()["max_total_num_tokens"].toDouble(), 432000.0);
    QCOMPARE(vllm["gauges"].toObject()["num_running_reqs"].toDouble(), 11.0);
    QVERIFY(qAbs(vllm["prefix_hit_rate"].toDouble() - 2574128.0 / 4226327.0) < 1e-9);
    QVERIFY(qAbs(vllm["external_hit_rate"].toDouble() - 353424.0 / 1024680.0) < 1e-9);
    QVERIFY(vllm["histograms"].toObject()["ttft_seconds"].toObject()["p99"].toDouble() > 0);
    QVERIFY(vllm["unread_families"].toArray().contains(QJsonValue("process_resident_memory_bytes")));
    QVERIFY(vllm["notes"].toArray().isEmpty());
    QCOMPARE(sglang["engine"].toString(), QString("sglang"));
    QVERIFY(sglang["gauges"].toObject().contains("kv_evictable_tokens"));
  }

  void theNamedEngineIsTheOneRead() {
    // A vLLM answer read as SGLang's: nothing understood, and the note says so.
    RUN_EXPECT(r, 0, QStringList{"scrape", "--engine", "sglang", fixture("vllm_v0_10.prom")});
    const QJsonObject o = jsonLines(r.out).value(0);
    QCOMPARE(o["engine"].toString(), QString("sglang"));
    QCOMPARE(o["ranks"].toInt(), 0);
    QVERIFY2(o["notes"].toArray().first().toString().contains("no sglang: or sglang_ metrics"), r.out.constData());
  }

  void aLiveUrlIsScraped() {
    QProcess server;
    server.setProgram("/usr/bin/python3");
    server.setArguments({"-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory",
                         QString::fromStdString(kvscope::test::testDataPath("upstream_metrics"))});
    server.start();
    QVERIFY(server.waitForStarted(kTimeoutMs));
    QByteArray banner;
    const QRegularExpression port_re(R"(port (\d+))");
    QRegularExpressionMatch m;
    for (int i = 0; i < 100 && !(m = port_re.match(QString::fromUtf8(banner))).hasMatch(); ++i) {
      server.waitForReadyRead(100);
      banner += server.readAllStandardOutput();
    }
    QVERIFY2(m.hasMatch(), banner.constData());
    const QString url = "http://127.0.0.1:" + m.captured(1) + "/vllm_v0_18_2.prom";
    RUN_EXPECT(r, 0, QStringList{"scrape", url, "--timeout", "10"});
    const QJsonObject o = jsonLines(r.out).value(0);
    QCOMPARE(o["source"].toString(), url);
    QCOMPARE(o["engine"].toString(), QString("vllm"));
    QCOMPARE(o["counters"].toObject()["num_preemptions_total"].toDouble(), 9.0);
    // A path the server does not have: HTTP 404, an error object, exit 1; the good source still prints.
    RUN_EXPECT(bad, 1, QStringList{"scrape", url, "http://127.0.0.1:" + m.captured(1) + "/nothing"});
    const auto both = jsonLines(bad.out);
    QCOMPARE(both.size(), 2);
    QCOMPARE(both[0]["engine"].toString(), QString("vllm"));
    QVERIFY2(both[1]["error"].toString().contains("HTTP 404"), bad.out.constData());
    server.kill();
    server.waitForFinished();
  }

  void unreadableSourcesSayWhy() {
    RUN_EXPECT(r, 1, QStringList{"scrape", "/nonexistent/metrics.txt", "http://127.0.0.1:1/metrics"});
    const auto all = jsonLines(r.out);
    QCOMPARE(all.size(), 2);
    QVERIFY2(all[0]["error"].toString().contains("/nonexistent/metrics.txt"), r.out.constData());
    QVERIFY2(all[1]["error"].toString().contains("GET http://127.0.0.1:1/metrics"), r.out.constData());
    RUN_EXPECT(usage, 2, QStringList{"scrape", "--engine", "tgi", fixture("vllm_v0_8.prom")});
    Q_UNUSED(usage);
  }
};

QTEST_GUILESS_MAIN(TestCliScrape)
#include "test_cli_scrape.moc"
