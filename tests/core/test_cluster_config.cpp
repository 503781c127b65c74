// The live cluster file: a full example loads with every field, relative log paths resolve against
// the file, and each mistake names the file, line and field, with what was expected.
#include <QtTest>

#include <fstream>

#include "core/io/ResourceDir.h"
#include "core/live/ClusterConfigLoader.h"
#include "core/live/LiveClusterLayout.h"
#include "core/model/Error.h"

using namespace kvscope;

namespace {

// A plain literal: moc (Qt 6.4) does not read raw string literals.
const char* kLab =
    "# The lab's 1 P + 3 D on 4x H200.\n"
    "name: lab-1p3d\n"
    "scrape_interval_s: 0.5\n"
    "logs_from_start: true\n"
    "router:\n"
    "  policy: exclusive-overlap\n"
    "  knobs: {K: 200, seed_min_turn_id: 2}\n"
    "client_logs: bench/client.log\n"
    "workers:\n"
    "  - id: P0\n"
    "    role: prefill\n"
    "    metrics: http://10.99.91.40:30000/metrics\n"
    "    logs: [logs/p0.log]\n"
    "    bootstrap: 10.99.91.40:8998\n"
    "  - id: D0\n"
    "    role: decode\n"
    "    metrics: http://10.99.91.47:30001/metrics\n"
    "    logs:\n"
    "      - /var/log/sglang/d0.log\n"
    "      - /var/log/sglang/d0-mooncake.log\n"
    "    mooncake: 10.99.91.47:15295\n"
    "    kv_capacity_tokens: 400000\n"
    "  - {id: D1, role: decode, metrics: \"http://10.99.91.48:30001/metrics\"}\n";

QString errorOf(const std::string& text) {
  try {
    ClusterConfigLoader::parse(text, "/etc/kvscope/cluster.yaml");
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestClusterConfig : public QObject {
  Q_OBJECT
 private slots:
  void labFile() {
    const ClusterConfig c = ClusterConfigLoader::parse(kLab, "/etc/kvscope/cluster.yaml");
    QCOMPARE(c.name, std::string("lab-1p3d"));
    QCOMPARE(c.scrape_interval_s, 0.5);
    QVERIFY(c.logs_from_start);
    QVERIFY(c.router);
    QCOMPARE(c.router->policy, std::string("exclusive-overlap"));
    QCOMPARE(c.router->block_size, 24);
    QCOMPARE(c.router->knobs, (std::map<std::string, double>{{"K", 200}, {"seed_min_turn_id", 2}}));
    QVERIFY(!ClusterConfigLoader::parse("router:\nworkers: [{id: D0, role: decode, logs: x}]\n", "c.yaml")
                 .router->knobs.size());
    QVERIFY(!ClusterConfigLoader::parse("workers: [{id: D0, role: decode, logs: x}]\n", "c.yaml").router);
    QCOMPARE(c.client_logs, std::vector<std::string>{"/etc/kvscope/bench/client.log"});
    QCOMPARE(c.workers.size(), std::size_t(3));
    const auto& p = c.workers[0];
    QCOMPARE(p.id, std::string("P0"));
    QCOMPARE(p.role, WorkerRole::Prefill);
    QCOMPARE(p.logs, std::vector<std::string>{"/etc/kvscope/logs/p0.log"});
    QCOMPARE(p.bootstrap_address, std::string("10.99.91.40:8998"));
    QCOMPARE(p.line, 10L);  // "  - id: P0"
    const auto& d = c.workers[1];
    QCOMPARE(d.logs.size(), std::size_t(2));
    QCOMPARE(d.mooncake_address, std::string("10.99.91.47:15295"));
    QCOMPARE(d.kv_capacity_tokens, std::int64_t(400000));
    QCOMPARE(c.workers[2].metrics_url, std::string("http://10.99.91.48:30001/metrics"));
  }

  void defaultsAndFileOnDisk() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("small.yaml").toStdString();
    std::ofstream(path) << "workers:\n  - id: I0\n    role: unified\n    logs: i0.log\n";
    const ClusterConfig c = ClusterConfigLoader::load(path);
    QCOMPARE(c.name, std::string("small"));
    QCOMPARE(c.scrape_interval_s, 1.0);
    QVERIFY(!c.logs_from_start);
    QCOMPARE(c.workers[0].logs[0], dir.filePath("i0.log").toStdString());
    try {
      ClusterConfigLoader::load(dir.filePath("missing.yaml").toStdString());
      QFAIL("no error");
    } catch (const InputError& e) {
      QVERIFY(std::string(e.what()).find("missing.yaml: no such file") != std::string::npos);
    }
  }

  // A worker's Mooncake transfer-engine logs, resolved like its scheduler logs; they are
  // enough to watch a worker by.
  void mooncakeLogs() {
    const ClusterConfig c = ClusterConfigLoader::parse(
        "workers:\n  - id: P0\n    role: prefill\n    mooncake_logs: [te/p0.log, /var/log/te.log]\n"
        "  - id: D0\n    role: decode\n    logs: d0.log\n",
        "/etc/kvscope/c.yaml");
    QCOMPARE(c.workers[0].mooncake_logs, (std::vector<std::string>{"/etc/kvscope/te/p0.log", "/var/log/te.log"}));
    QVERIFY(c.workers[0].logs.empty());
    QVERIFY(c.workers[1].mooncake_logs.empty());
  }

  // `engine:` says whose /metrics and logs a worker's are: SGLang unless it says vllm.
  void engines() {
    const ClusterConfig c = ClusterConfigLoader::parse(
        "workers:\n  - id: D0\n    role: decode\n    engine: vllm\n    metrics: http://h:8000/metrics\n"
        "  - id: D1\n    role: decode\n    engine: sglang\n    logs: d1.log\n"
        "  - id: D2\n    role: decode\n    logs: d2.log\n",
        "/etc/kvscope/c.yaml");
    QCOMPARE(c.workers[0].engine, EngineKind::Vllm);
    QCOMPARE(c.workers[1].engine, EngineKind::Sglang);
    QCOMPARE(c.workers[2].engine, EngineKind::Sglang);
    QCOMPARE(LiveClusterLayout::of(c).refs[0].engine, EngineKind::Vllm);
  }

  void bundledExample() {
    const ClusterConfig c = ClusterConfigLoader::load(resourcePath("clusters/lab-1p3d.yaml"));
    QCOMPARE(c.name, std::string("lab-1p3d"));
    QCOMPARE(c.workers.size(), std::size_t(4));
    QCOMPARE(c.workers[3].mooncake_address, std::string("10.99.91.49:15295"));
    QCOMPARE(c.workers[0].mooncake_logs, std::vector<std::string>{"/var/log/sglang/p0-mooncake.log"});
  }

  void mistakes_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    const QString head = "workers:\n  - id: D0\n    role: decode\n    metrics: http://h:1/metrics\n";
    QTest::newRow("bad role")
        << head + "  - id: D1\n    role: decoder\n    logs: x\n"
        << "cluster.yaml:6: field 'workers[1].role': expected prefill, decode or unified, got 'decoder'";
    QTest::newRow("typo key") << head + "    metric: http://h:2/metrics\n"
                              << "cluster.yaml:5: field 'workers[0].metric': unknown key; expected one of id, role";
    QTest::newRow("duplicate id")
        << head + "  - id: D0\n    role: decode\n    logs: x\n"
        << "cluster.yaml:5: field 'workers[1].id': expected a unique id, got 'D0' a second time";
    QTest::newRow("https") << "workers:\n  - id: D0\n    role: decode\n    metrics: https://h/metrics\n"
                           << "cluster.yaml:4: field 'workers[0].metrics': expected an http://HOST:PORT/metrics URL";
    for (const char* url : {"http://[::1/metrics", "http://:9/metrics", "http://h:/metrics", "http://h:99999/metrics",
                            "http://h:x/metrics", "http://::1:9/metrics", "http://[::1]x/metrics"})
      QTest::newRow(url) << QString("workers:\n  - id: D0\n    role: decode\n    metrics: \"%1\"\n").arg(url)
                         << "cluster.yaml:4: field 'workers[0].metrics': expected an http://HOST:PORT/metrics URL";
    QTest::newRow("no role") << "workers:\n  - id: D0\n    logs: x\n"
                             << "cluster.yaml:2: field 'workers[0]': expected a 'role'";
    QTest::newRow("nothing watched") << "workers:\n  - id: D0\n    role: decode\n"
                                     << "cluster.yaml:2: field 'workers[0]': expected 'metrics' or 'logs'";
    QTest::newRow("only prefill") << "workers:\n  - id: P0\n    role: prefill\n    logs: x\n"
                                  << "cluster.yaml:2: field 'workers': expected at least one decode or unified worker";
    QTest::newRow("interval")
        << "scrape_interval_s: fast\n" + head
        << "cluster.yaml:1: field 'scrape_interval_s': expected a number in [0.05, 3600], got 'fast'";
    QTest::newRow("bool") << "logs_from_start: maybe\n" + head
                          << "cluster.yaml:1: field 'logs_from_start': expected true or false, got 'maybe'";
    QTest::newRow("mooncake on P") << "workers:\n  - id: P0\n    role: prefill\n    logs: x\n    mooncake: h:1\n"
                                   << "cluster.yaml:5: field 'workers[0].mooncake': expected only on a decode worker";
    QTest::newRow("bad address")
        << head + "    mooncake: h:port\n"
        << "cluster.yaml:5: field 'workers[0].mooncake': expected HOST:PORT with a numeric port";
    QTest::newRow("no workers") << "name: x\n"
                                << "cluster.yaml:1: expected 'workers'";
    QTest::newRow("empty workers") << "workers: []\n"
                                   << "cluster.yaml:1: field 'workers': expected a non-empty list";
    QTest::newRow("bad yaml") << "workers: [\n  - id: D0\n"
                              << "cluster.yaml:";
    QTest::newRow("not a mapping") << "- just\n- a list\n"
                                   << "cluster.yaml:1: expected a mapping with 'workers'";
    QTest::newRow("router policy") << "router: {policy: fastest}\n" + head
                                   << "cluster.yaml:1: field 'router.policy': expected a policy (";
    QTest::newRow("router knob") << "router:\n  knobs: {K: -3}\n" + head
                                 << "cluster.yaml:2: field 'router.knobs.K': expected ";
    QTest::newRow("router key")
        << "router:\n  endpoint: h:1\n" + head
        << "cluster.yaml:2: field 'router.endpoint': unknown key; expected one of policy, block_size, knobs";
    QTest::newRow("engine") << head + "    engine: tgi\n"
                            << "cluster.yaml:5: field 'workers[0].engine': expected sglang or vllm, got 'tgi'";
    QTest::newRow("logs mapping") << head + "    logs: {a: b}\n"
                                  << "cluster.yaml:5: field 'workers[0].logs': expected a file name or a list of them";
  }
  void mistakes() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const QString error = errorOf(text.toStdString());
    QVERIFY2(error.startsWith("/etc/kvscope/" + expected), qPrintable(error));
  }
};

QTEST_GUILESS_MAIN(TestClusterConfig)
#include "test_cluster_config.moc"
