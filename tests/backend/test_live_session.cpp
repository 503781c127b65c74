// A lab-like cluster on this machine (the observation side): a cluster file with
// P0 + D0 + D1, a local HTTP server serving SGLang metrics built from the fixture for D0 and D1,
// and log files that a writer appends to while the session runs (a correction then a crash on D0,
// link failures from P0 to D1, a lost connection on D1, the client's error). The stream then shows
// per-D load and KV occupancy, the crash and the link failures, and the diagnosis engine names
// modes D and A. Also: the recorder gets the same stream, and `kvscope-cli serve --live` runs it.
#include <QtTest>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <httplib.h>

#include "backend/live/LiveSession.h"
#include "backend/recording/EventRecorder.h"
#include "backend/recording/KvrecReader.h"
#include "core/diagnosis/DiagnosisEngine.h"
#include "core/live/ClusterConfigLoader.h"
#include "tests/support/CliRunner.h"
#include "tests/support/Fixtures.h"

using namespace kvscope;
using kvscope::test::fixture;
using namespace std::chrono_literals;

namespace {

struct Collect : EventSink {
  mutable std::mutex mutex;
  std::vector<Event> events;
  DiagnosisEngine diagnosis;
  void onEvent(const Event& e) override {
    std::lock_guard lock(mutex);
    events.push_back(e);
    diagnosis.onEvent(e);
  }
  template <class T>
  std::vector<T> of() const {
    std::lock_guard lock(mutex);
    std::vector<T> out;
    for (const auto& e : events)
      if (const auto* x = std::get_if<T>(&e.payload)) out.push_back(*x);
    return out;
  }
  std::vector<std::string> modes() const {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (const auto& f : diagnosis.findings()) out.push_back(f.mode);
    return out;
  }
};

// D0's and D1's /metrics: the docs fixture with the occupancy replaced per worker.
class FakeSglang {
 public:
  FakeSglang() {
    const std::string docs = fixture("sglang_metrics_sample.txt");
    for (int d = 0; d < 2; ++d) {
      std::string body = docs;
      const std::string from = "sglang:num_used_tokens{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 123859.0";
      body.replace(
          body.find(from), from.size(),
          "sglang:num_used_tokens{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} " + std::to_string(10000 * (d + 1)));
      body += "sglang:max_total_num_tokens{model_name=\"meta-llama/Llama-3.1-8B-Instruct\"} 100000\n";
      server_.Get("/d" + std::to_string(d) + "/metrics",
                  [body](const httplib::Request&, httplib::Response& r) { r.set_content(body, "text/plain"); });
    }
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~FakeSglang() {
    server_.stop();
    thread_.join();
  }
  std::string url(int d) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/d" + std::to_string(d) + "/metrics";
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

// Frames of a closed recording, requiring it undamaged.
std::size_t framesIn(const std::string& path) {
  std::string error;
  auto reader = KvrecReader::open(path, &error);
  if (!reader) return 0;
  std::size_t n = 0;
  KvrecFrame f;
  while (reader->next(f)) ++n;
  return reader->problems().empty() ? n : 0;
}

void append(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }

std::string clusterFile(const QTemporaryDir& dir, const FakeSglang& fake) {
  const std::string path = dir.filePath("cluster.yaml").toStdString();
  std::ofstream(path) << "name: lab-like\n"
                         "scrape_interval_s: 0.1\n"
                         "client_logs: client.log\n"
                         "workers:\n"
                         "  - {id: P0, role: prefill, logs: p0.log, bootstrap: 10.0.0.9:8998}\n"
                         "  - id: D0\n"
                         "    role: decode\n"
                         "    metrics: "
                      << fake.url(0)
                      << "\n"
                         "    logs: d0.log\n"
                         "    mooncake: 10.0.0.1:15295\n"
                         "  - id: D1\n"
                         "    role: decode\n"
                         "    metrics: "
                      << fake.url(1)
                      << "\n"
                         "    logs: [d1.log]\n"
                         "    mooncake: 10.0.0.2:15295\n";
  for (const char* log : {"p0.log", "d0.log", "d1.log", "client.log"})
    append(dir.filePath(log).toStdString(), "[2025-06-01 11:59:00 TP0] history before the session\n");
  return path;
}

// What the lab's logs say during a mode D crash followed by a mode A cascade.
void playIncident(const QTemporaryDir& dir) {
  const auto log = [&](const char* f) { return dir.filePath(f).toStdString(); };
  append(
      log("d0.log"),
      "[2025-06-01 12:00:01 TP0] Decode batch, #running-req: 12, #token: 80000, token usage: 0.80, #prealloc-req: 3, "
      "#transfer-req: 2, cuda graph: True, gen throughput (token/s): 812.44, #queue-req: 4\n"
      "[2025-06-01 12:00:01 TP0] Correcting streaming-session extend_input_len from 6648 to 0 (rid=4a1f, "
      "session_id=1000195, fill_len=6648, prefix_len=43459, kv_committed_len=43459)\n"
      "[2025-06-01 12:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/sgl/managers/scheduler.py\", line 2310, in event_loop_normal_disagg_decode\n"
      "    assert seq_len - pre_len == req.extend_input_len\n"
      "AssertionError\n");
  for (int i = 0; i < 12; ++i)
    append(log("p0.log"),
           "[2025-06-01 12:00:03 TP0] Prefill transfer failed for request rank=0 req.rid='r" + std::to_string(i) +
               "' req.bootstrap_room=" + std::to_string(100 + i) +
               " with exception KVTransferError(bootstrap_room=1): Decode instance could be dead, remote "
               "mooncake session 10.0.0.2:15295 is not alive\n");
  append(log("d1.log"),
         "[2025-06-01 12:00:04 TP0] Lost connection with prefill instance (bootstrap_addr: 10.0.0.9:8998), "
         "7 requests affected\nthis line is nothing SGLang writes\n");
  append(log("client.log"), "RuntimeError: generate stream ended before producing any token\n");
}

}  // namespace

class TestLiveSession : public QObject {
  Q_OBJECT
 private slots:
  void labLikeCluster() {
    QTemporaryDir dir;
    FakeSglang fake;
    Collect sink;
    LiveSession::Options options;
    options.tail.poll_ms = 20;
    options.tail.idle_ms = 200;
    const std::string kvrec = dir.filePath("live.kvrec").toStdString();
    EventRecorder recorder(kvrec);
    LiveSession session(ClusterConfigLoader::load(clusterFile(dir, fake)), {&sink, &recorder}, options);
    session.start();
    QTRY_VERIFY_WITH_TIMEOUT(
        session.statuses()[0].health == WorkerHealth::Ok && session.statuses()[1].health == WorkerHealth::Ok, 5000);
    QCOMPARE(session.statuses()[2].name, std::string("P0"));
    QCOMPARE(session.statuses()[2].health, WorkerHealth::Unknown);  // no metrics URL
    playIncident(dir);

    QTRY_VERIFY_WITH_TIMEOUT(!sink.of<WorkerCrashed>().empty(), 5000);  // released when d0.log goes quiet
    QTRY_VERIFY_WITH_TIMEOUT(sink.of<RequestDone>().size() >= 13, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(sink.of<LinkHealth>().size() >= 2, 5000);
    std::this_thread::sleep_for(300ms);  // a few more snapshots
    session.stop();
    std::string error;
    QVERIFY2(recorder.close(&error), error.c_str());

    const auto run = sink.of<RunStarted>();
    QCOMPARE(run.size(), std::size_t(1));
    QCOMPARE(run[0].workers.size(), std::size_t(2));
    QCOMPARE(run[0].prefill.size(), std::size_t(1));
    const auto crash = sink.of<WorkerCrashed>();
    QCOMPARE(crash.size(), std::size_t(1));
    QCOMPARE(crash[0].worker, 0);
    QVERIFY(crash[0].reason.find("AssertionError") != std::string::npos);
    QCOMPARE(sink.of<Correction>().at(0).fill_len, std::int64_t(6648));
    // The fake D0 keeps answering /metrics after its crash: a scrape sent after it says it runs again.
    QCOMPARE(sink.of<WorkerRestarted>().size(), std::size_t(1));
    const auto links = sink.of<LinkHealth>();
    QCOMPARE(links.size(), std::size_t(2));  // P0->D1 dead (once, not per failure), then D1's lost connection
    for (const auto& l : links) {
      QCOMPARE(l.prefill, 0);
      QCOMPARE(l.worker, 1);
      QCOMPARE(l.state, LinkState::Dead);
    }
    QCOMPARE(links[1].aborted_requests, 7);
    QCOMPARE(sink.of<TransferFinished>().size(), std::size_t(12));
    QCOMPARE(sink.of<RequestDone>().size(), std::size_t(13));  // 12 transfers + the client
    // Per-D load and KV occupancy, from /metrics and the batch line.
    const auto snaps = sink.of<Snapshot>();
    QVERIFY(snaps.size() >= 3);
    const Snapshot& last = snaps.back();
    QCOMPARE(last.workers[1].kv_used, std::int64_t(20000));
    QCOMPARE(last.workers[1].kv_capacity, std::int64_t(100000));
    QCOMPARE(last.workers[1].running, 162);
    QVERIFY(last.workers[0].alive);
    QCOMPARE(last.workers[0].kv_used, std::int64_t(10000));
    QCOMPARE(sink.of<RunFinished>().size(), std::size_t(1));
    // The history before the session was not read (logs follow from the end by default).
    for (const auto& l : session.logStats()) QCOMPARE(l.lines.unknown <= 1, true);

    const auto modes = sink.modes();
    QVERIFY2(std::count(modes.begin(), modes.end(), "D") == 1, "mode D not named");
    QVERIFY2(std::count(modes.begin(), modes.end(), "A") == 1, "mode A not named");

    // The recorder got the same stream.
    QCOMPARE(framesIn(kvrec), sink.events.size());
  }

  // With a router: requests routed and never reported are forgotten past unreported_expiry_s even
  // when no further request comes, and the live cluster's snapshots (the ones the console and
  // Prometheus read under `serve --live`) say how many, per worker.
  void routerExpiriesReachTheLiveSnapshots() {
    QTemporaryDir dir;
    FakeSglang fake;
    const std::string path = clusterFile(dir, fake);
    std::string text;
    {
      std::ifstream in(path);
      std::stringstream s;
      s << in.rdbuf();
      text = s.str();
    }
    std::ofstream(path) << "router:\n  policy: kv-aware\n  knobs: {unreported_expiry_s: 1}\n" << text;
    Collect sink;
    LiveSession session(ClusterConfigLoader::load(path), {&sink});
    QVERIFY(session.router());
    session.start();
    for (RequestId r = 1; r <= 5; ++r) {
      LiveRouter::RouteInput in;
      in.request = r;
      in.session = r;
      in.input_tokens = 1000;
      in.candidates = {1};
      session.router()->route(in);
    }
    const auto awaitingOnD1 = [&] {
      const auto snaps = sink.of<Snapshot>();
      return snaps.empty() ? std::int64_t{-1} : snaps.back().workers.at(1).awaiting_report;
    };
    QTRY_COMPARE_WITH_TIMEOUT(awaitingOnD1(), std::int64_t{5}, 5000);  // before the expiry: all five wait
    const auto expiredOnD1 = [&] {
      const auto snaps = sink.of<Snapshot>();
      return snaps.empty() ? std::int64_t{-1} : snaps.back().workers.at(1).expired_unreported;
    };
    QTRY_COMPARE_WITH_TIMEOUT(expiredOnD1(), std::int64_t{5}, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(awaitingOnD1(), std::int64_t{0}, 5000);  // expired: no longer waited for
    QCOMPARE(sink.of<Snapshot>().back().workers.at(0).expired_unreported, std::int64_t{0});
    session.stop();
  }

  // A worker's Mooncake engine log (the cluster file's mooncake_logs) says itself which
  // link it gave up on, with its severity; an unknown scheduler line is counted by its shape.
  void mooncakeLogsAndUnknownShapes() {
    QTemporaryDir dir;
    Collect sink;
    LiveSession::Options options;
    options.tail.poll_ms = 20;
    options.tail.idle_ms = 200;
    const std::string path = dir.filePath("cluster.yaml").toStdString();
    std::ofstream(path)
        << "workers:\n"
           "  - {id: P0, role: prefill, logs: p0.log, mooncake_logs: [p0-te.log], bootstrap: 10.0.0.9:8998}\n"
           "  - {id: D0, role: decode, logs: d0.log, mooncake: 10.0.0.1:15295}\n"
           "  - {id: D1, role: decode, logs: d1.log, mooncake: 10.0.0.2:15295}\n";
    for (const char* log : {"p0.log", "p0-te.log", "d0.log", "d1.log"}) append(dir.filePath(log).toStdString(), "");
    LiveSession session(ClusterConfigLoader::load(path), {&sink}, options);
    session.start();
    QTRY_VERIFY_WITH_TIMEOUT(session.logStats().size() == 4 && session.logStats()[1].tail.error.empty(), 5000);
    std::this_thread::sleep_for(100ms);  // the tailer has opened the files at their end
    // kvcache-ai/Mooncake v0.3.4 worker_pool.cpp:237, then a glog line of no known message.
    append(dir.filePath("p0-te.log").toStdString(),
           "E0601 12:00:05.000100  4711 worker_pool.cpp:237] Worker: Cannot make connection for endpoint: "
           "10.0.0.2:15295@mlx5_1, mark it inactive\n"
           "I0601 12:00:05.000200  4711 new_thing.cpp:9] Frobnicated 3 widgets\n");
    append(dir.filePath("d0.log").toStdString(),
           "[2025-06-01 12:00:06 TP0] Xyz batch. #foo: 12\n"
           "[2025-06-01 12:00:07 TP0] Xyz batch. #foo: 13\n");
    QTRY_VERIFY_WITH_TIMEOUT(!sink.of<LinkHealth>().empty(), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(session.logStats()[2].lines.unknown == 2, 5000);
    // The engine also writes to the worker's stderr: its glog lines inside D1's scheduler log.
    append(dir.filePath("d1.log").toStdString(),
           "E0601 12:00:08.000000  5100 rdma_endpoint.cpp:150] Reject the handshake request by peer "
           "10.0.0.9:15295@mlx5_0\n");
    QTRY_VERIFY_WITH_TIMEOUT(sink.of<LinkHealth>().size() == 2, 5000);
    session.stop();
    const auto links = sink.of<LinkHealth>();
    QCOMPARE(links.size(), std::size_t(2));
    QCOMPARE(links[1].worker, 1);
    QCOMPARE(links[1].state, LinkState::Suspect);
    QVERIFY2(links[1].reason.starts_with("Mooncake E rdma_endpoint.cpp:150: "), links[1].reason.c_str());
    QCOMPARE(links[0].prefill, 0);
    QCOMPARE(links[0].worker, 1);
    QCOMPARE(links[0].state, LinkState::Dead);
    QVERIFY2(links[0].reason.starts_with("Mooncake E worker_pool.cpp:237: Worker: Cannot make connection"),
             links[0].reason.c_str());
    const auto stats = session.logStats();
    QVERIFY(stats[1].mooncake);
    QCOMPARE(stats[1].worker, std::string("P0"));
    QCOMPARE(stats[1].lines.lines, 2L);
    QCOMPARE(stats[1].lines.known, 1L);
    QCOMPARE(LineShapeCounter::describe(stats[1].unknown_shapes.at(0)),
             std::string("1 line like \"Frobnicated <n> widgets\""));
    QCOMPARE(LineShapeCounter::describe(stats[2].unknown_shapes.at(0)),
             std::string("2 lines like \"Xyz batch. #foo: <n>\""));
  }

  void serveLiveCli() {
    QTemporaryDir dir;
    FakeSglang fake;
    const std::string cluster = clusterFile(dir, fake);
    QProcess p;
    p.setProgram(KVSCOPE_CLI);
    const QString kvrec = dir.filePath("cli.kvrec");
    p.setArguments({"serve", "--live", QString::fromStdString(cluster), "--listen", "127.0.0.1:0", "--record", kvrec});
    p.start();
    QVERIFY(p.waitForStarted());
    QByteArray out;
    QTRY_VERIFY2_WITH_TIMEOUT((out += p.readAllStandardOutput()).contains("listening on 127.0.0.1:"), qPrintable(out),
                              10000);
    playIncident(dir);
    QTest::qWait(1500);
    p.terminate();  // SIGTERM: a clean stop
    QVERIFY(p.waitForFinished(10000));
    // spdlog's default logger writes to stdout.
    const QByteArray log = out + p.readAllStandardOutput() + p.readAllStandardError();
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, log.constData());
    QVERIFY2(log.contains("D0 /metrics ok") && log.contains("D1 /metrics ok"), log.constData());
    QVERIFY2(log.contains("d0.log: 6 lines (3 known, 0 unknown, 0 malformed, 3 traceback)"), log.constData());
    QVERIFY2(log.contains("p0.log: 12 lines (12 known"), log.constData());
    QVERIFY(framesIn(kvrec.toStdString()) > 10);
  }

  void serveLiveErrors() {
    QTemporaryDir dir;
    const QString bad = dir.filePath("bad.yaml");
    std::ofstream(bad.toStdString()) << "workers:\n  - id: D0\n    role: decoder\n    logs: d0.log\n";
    using namespace kvscope::test;
    RUN_EXPECT(wrong, 1, QStringList{"serve", "--live", bad});
    QVERIFY2(wrong.err.contains(":3: field 'workers[0].role': expected prefill, decode or unified, got 'decoder'"),
             wrong.err.constData());
    RUN_EXPECT(mixed, 2, QStringList{"serve", "--live", bad, "--scenario", "cascade"});
    QVERIFY2(mixed.err.contains("excludes"), mixed.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestLiveSession)
#include "test_live_session.moc"
