// MetricsScraper against real HTTP servers (cpp-httplib, in this process, on loopback): a fake
// SGLang worker serving the docs fixture and a decode worker whose failure counters rise; a slow
// worker, one that drips bytes, one that answers garbage, an HTTP error, a huge body, vLLM's
// truncated sample, and a port nobody listens on. Each ends as ok / degraded / unreachable with its
// reason, bounded in time, and a slow worker does not hold back the others' loops.
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <httplib.h>

#include "backend/live/LiveCluster.h"
#include "backend/live/MetricsScraper.h"
#include "tests/support/Fixtures.h"
#include "tests/support/LockedEventLog.h"

using namespace kvscope;
using kvscope::test::fixture;
using namespace std::chrono_literals;

namespace {

using Collect = kvscope::test::LockedEventLog;

// A fake fleet of workers: one path per behaviour.
class FakeWorkers {
 public:
  FakeWorkers() {
    server_.new_task_queue = [] { return new httplib::ThreadPool(8); };
    const std::string docs = fixture("sglang_metrics_sample.txt"), vllm = fixture("vllm_metrics_sample.txt");
    server_.Get("/docs/metrics",
                [docs](const httplib::Request&, httplib::Response& r) { r.set_content(docs, "text/plain"); });
    server_.Get("/vllm/metrics",
                [vllm](const httplib::Request&, httplib::Response& r) { r.set_content(vllm, "text/plain"); });
    server_.Get("/decode/metrics", [this](const httplib::Request&, httplib::Response& r) {
      const int failed = failed_.load();
      r.set_content(
          "# TYPE sglang:num_used_tokens gauge\n"
          "sglang:num_used_tokens{engine_type=\"decode\",tp_rank=\"0\"} 30000\n"
          "sglang:max_total_num_tokens{engine_type=\"decode\",tp_rank=\"0\"} 100000\n"
          "sglang:num_running_reqs{engine_type=\"decode\",tp_rank=\"0\"} 7\n"
          "sglang:num_queue_reqs{engine_type=\"decode\",tp_rank=\"0\"} 2\n"
          "sglang:num_decode_prealloc_queue_reqs{engine_type=\"decode\",tp_rank=\"0\"} 1\n"
          "sglang:num_transfer_failed_reqs_total{engine_type=\"decode\",tp_rank=\"0\"} " +
              std::to_string(failed) + "\n",
          "text/plain");
    });
    server_.Get("/slow/metrics", [this](const httplib::Request&, httplib::Response& r) {
      for (int i = 0; i < 30 && !stopping_; ++i) std::this_thread::sleep_for(100ms);
      r.set_content("sglang:num_running_reqs 1\n", "text/plain");
    });
    server_.Get("/sluggish/metrics", [docs](const httplib::Request&, httplib::Response& r) {
      std::this_thread::sleep_for(400ms);
      r.set_content(docs, "text/plain");
    });
    server_.Get("/drip/metrics", [this](const httplib::Request&, httplib::Response& r) {
      r.set_chunked_content_provider("text/plain", [this](std::size_t, httplib::DataSink& sink) {
        if (stopping_) return false;
        std::this_thread::sleep_for(200ms);
        sink.write("sglang:num_running_reqs 1\n", 26);
        return true;
      });
    });
    server_.Get("/garbage/metrics", [](const httplib::Request&, httplib::Response& r) {
      std::mt19937 rng(3);
      std::string body(4000, '\0');
      for (auto& c : body) c = static_cast<char>(rng());
      r.set_content(body, "application/octet-stream");
    });
    server_.Get("/huge/metrics", [](const httplib::Request&, httplib::Response& r) {
      r.set_content(std::string(20u << 20, '#'), "text/plain");
    });
    server_.Get("/error/metrics", [](const httplib::Request&, httplib::Response& r) { r.status = 500; });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~FakeWorkers() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  std::string url(const char* worker) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + worker + "/metrics";
  }
  std::atomic<int> failed_{3};

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
};

// A port that refuses connections: bound (never listened on), then closed.
int closedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

RunStarted cluster(int decode) {
  RunStarted r;
  r.scenario = "live test";
  for (int i = 0; i < decode; ++i) r.workers.push_back({"D" + std::to_string(i), WorkerRole::Decode, 0});
  r.prefill.push_back({"P0", WorkerRole::Prefill, 0});
  return r;
}

ScrapeTarget target(int index, std::string url) {
  ScrapeTarget t;
  t.worker.name = "D" + std::to_string(index);
  t.worker.worker = index;
  t.worker.peer_prefill = 0;
  t.url = std::move(url);
  t.status_index = static_cast<std::size_t>(index);
  return t;
}

ScrapeOptions quick() {
  ScrapeOptions o;
  o.interval_ms = 100;
  o.connect_timeout_ms = 500;
  o.read_timeout_ms = 500;
  o.deadline_ms = 1000;
  o.slow_ms = 300;
  return o;
}

}  // namespace

class TestMetricsScraper : public QObject {
  Q_OBJECT
 private slots:
  void fixtureWorkerIsOk() {
    FakeWorkers fake;
    Collect sink;
    LiveCluster live(cluster(1), {&sink});
    live.start();
    MetricsScraper scraper({target(0, fake.url("docs"))}, quick(), live);
    const ScrapeResult r = scraper.scrapeOnce(0);
    QCOMPARE(r.health, WorkerHealth::Ok);
    QVERIFY2(r.reason.empty(), r.reason.c_str());
    QVERIFY(r.applied);
    live.snapshot();
    const auto snaps = sink.of<Snapshot>();
    QCOMPARE(snaps.size(), std::size_t(1));
    QCOMPARE(snaps[0].workers[0].kv_used, std::int64_t(123859));
    QCOMPARE(snaps[0].workers[0].running, 162);
    QCOMPARE(snaps[0].workers[0].queued, 2826);
    QCOMPARE(live.statuses()[0].health, WorkerHealth::Ok);
  }

  void failureCountersBecomeEvents() {
    FakeWorkers fake;
    Collect sink;
    LiveCluster live(cluster(2), {&sink});
    live.start();
    MetricsScraper scraper({target(1, fake.url("decode"))}, quick(), live);
    QCOMPARE(scraper.scrapeOnce(0).health, WorkerHealth::Ok);
    QVERIFY(sink.of<TransferFinished>().empty());  // the first value is history
    fake.failed_ = 5;
    QCOMPARE(scraper.scrapeOnce(0).health, WorkerHealth::Ok);
    const auto failed = sink.of<TransferFinished>();
    QCOMPARE(failed.size(), std::size_t(2));
    QCOMPARE(failed[0].prefill, 0);
    QCOMPARE(failed[0].worker, 1);
    live.snapshot();
    const auto g = sink.of<Snapshot>().back().workers[1];
    QCOMPARE(g.kv_used, std::int64_t(30000));
    QCOMPARE(g.kv_capacity, std::int64_t(100000));
    QCOMPARE(g.pending_seeds, 1);
  }

  void badWorkers_data() {
    QTest::addColumn<QString>("worker");
    QTest::addColumn<int>("health");
    QTest::addColumn<QString>("reason");
    QTest::newRow("refused") << "" << int(WorkerHealth::Unreachable) << "Connection";
    QTest::newRow("slow") << "slow" << int(WorkerHealth::Unreachable) << "Read";
    QTest::newRow("drip") << "drip" << int(WorkerHealth::Unreachable) << "no complete answer within 1.00 s";
    QTest::newRow("huge") << "huge" << int(WorkerHealth::Unreachable) << "larger than";
    QTest::newRow("garbage") << "garbage" << int(WorkerHealth::Degraded) << "binary data";
    QTest::newRow("http error") << "error" << int(WorkerHealth::Degraded) << "HTTP 500";
    QTest::newRow("vllm") << "vllm" << int(WorkerHealth::Degraded) << "truncated";
    QTest::newRow("sluggish") << "sluggish" << int(WorkerHealth::Degraded) << "slow: /metrics answered in";
  }
  void badWorkers() {
    QFETCH(QString, worker);
    QFETCH(int, health);
    QFETCH(QString, reason);
    FakeWorkers fake;
    LiveCluster live(cluster(1), {});
    live.start();
    const std::string url = worker.isEmpty() ? "http://127.0.0.1:" + std::to_string(closedPort()) + "/metrics"
                                             : fake.url(qPrintable(worker));
    MetricsScraper scraper({target(0, url)}, quick(), live);
    const auto began = std::chrono::steady_clock::now();
    const ScrapeResult r = scraper.scrapeOnce(0);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    QCOMPARE(int(r.health), health);
    QVERIFY2(QString::fromStdString(r.reason).contains(reason), r.reason.c_str());
    QVERIFY2(took < 2.5, qPrintable(QString::number(took)));  // bounded by the timeouts and deadline
    QCOMPARE(live.statuses()[0].reason, r.reason);
  }

  // A worker that sends its status line and headers a byte at a time, each byte
  // within the read timeout, is cut off at the deadline and marked unreachable (never waited on).
  void headersDrippedAByteAtATimeHitTheDeadline() {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    QCOMPARE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    QCOMPARE(::listen(listener, 4), 0);
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    std::atomic<bool> stop{false};
    std::thread dripper([&] {
      const int fd = ::accept(listener, nullptr, nullptr);
      const std::string head = "HTTP/1.1 200 OK\r\nX-Drip: " + std::string(1000, 'x');
      for (std::size_t i = 0; fd >= 0 && !stop && i < head.size(); ++i) {
        if (::send(fd, head.data() + i, 1, MSG_NOSIGNAL) != 1) break;
        std::this_thread::sleep_for(100ms);
      }
      if (fd >= 0) ::close(fd);
    });
    LiveCluster live(cluster(1), {});
    live.start();
    MetricsScraper scraper({target(0, "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/metrics")}, quick(),
                           live);
    const auto began = std::chrono::steady_clock::now();
    const ScrapeResult r = scraper.scrapeOnce(0);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    stop = true;
    dripper.join();
    ::close(listener);
    QCOMPARE(int(r.health), int(WorkerHealth::Unreachable));
    QVERIFY2(r.reason.find("no complete answer within 1.00 s") != std::string::npos, r.reason.c_str());
    QVERIFY2(took < 2.5, qPrintable(QString::number(took)));
  }

  void badUrl() {
    LiveCluster live(cluster(1), {});
    MetricsScraper scraper({target(0, "ftp://x/metrics")}, quick(), live);
    const ScrapeResult r = scraper.scrapeOnce(0);
    QCOMPARE(r.health, WorkerHealth::Unreachable);
    QVERIFY(r.reason.find("expected an http://") != std::string::npos);
  }

  // One loop per worker: a worker that takes 3 s to answer does not slow the other's scrapes.
  void slowWorkerDoesNotBlockOthers() {
    FakeWorkers fake;
    Collect sink;
    LiveCluster live(cluster(2), {&sink});
    live.start();
    ScrapeOptions o = quick();
    o.read_timeout_ms = 5000;
    o.deadline_ms = 5000;
    MetricsScraper scraper({target(0, fake.url("slow")), target(1, fake.url("docs"))}, o, live);
    scraper.start();
    std::this_thread::sleep_for(1200ms);
    const auto s = live.statuses();
    QVERIFY2(s[1].scrapes >= 6, qPrintable(QString::number(s[1].scrapes)));
    QCOMPARE(s[1].health, WorkerHealth::Ok);
    QCOMPARE(s[0].scrapes, 0L);  // still waiting on its first answer
    const auto stop_began = std::chrono::steady_clock::now();
    scraper.stop();
    QVERIFY(std::chrono::steady_clock::now() - stop_began < 5s);
  }
};

QTEST_GUILESS_MAIN(TestMetricsScraper)
#include "test_metrics_scraper.moc"
