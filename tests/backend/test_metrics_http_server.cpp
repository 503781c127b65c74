// The /metrics endpoint over real HTTP (a plain socket client, so the test relies on nothing the
// server uses): the text Prometheus expects with its content type, 404 elsewhere, and the same
// listen rules as the gRPC server (loopback unless --insecure, a busy port is an error).
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "backend/metrics/MetricsHttpServer.h"
#include "backend/metrics/RunMetrics.h"

using namespace kvscope;

namespace {

struct Reply {
  int status = 0;
  std::string headers;  // lower-cased, for lookups
  std::string body;
};

// A connected TCP socket to 127.0.0.1:port, -1 on failure. With `timeout_s`, its reads and writes
// give up after that long (a server that does not answer fails the test instead of hanging it).
int connectTo(int port, int timeout_s = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (timeout_s > 0) {
    const timeval tv{timeout_s, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  return fd;
}

// One HTTP/1.1 request on a fresh connection; the server closes it after the reply.
Reply request(int port, const std::string& method, const std::string& path, int timeout_s = 0) {
  Reply reply;
  const int fd = connectTo(port, timeout_s);
  if (fd < 0) return reply;
  const std::string text = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  std::string raw;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) raw.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  const auto end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return reply;
  reply.status = std::stoi(raw.substr(9, 3));
  reply.headers = raw.substr(0, end);
  for (auto& c : reply.headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  reply.body = raw.substr(end + 4);
  return reply;
}

}  // namespace

class TestMetricsHttpServer : public QObject {
  Q_OBJECT
 private slots:
  void servesTheMetricsText() {
    RunMetrics metrics;
    RunStarted run;
    run.scenario = "http-test";
    run.workers.push_back({"D0", WorkerRole::Decode, 1000});
    metrics.onEvent({1, 0, run});
    std::string error;
    auto server = MetricsHttpServer::start("127.0.0.1:0", false, metrics, &error);
    QVERIFY2(server, error.c_str());
    QVERIFY(server->port() > 0);
    QCOMPARE(server->address(), "127.0.0.1:" + std::to_string(server->port()));

    const Reply r = request(server->port(), "GET", "/metrics");
    QCOMPARE(r.status, 200);
    QVERIFY2(r.headers.find("content-type: text/plain; version=0.0.4") != std::string::npos, r.headers.c_str());
    QCOMPARE(r.body, metrics.render());
    QVERIFY(r.body.find("kvscope_run_info{scenario=\"http-test\"") != std::string::npos);

    // A scrape sees what the run has done since the previous one.
    metrics.onEvent({2, 10, Eviction{0, 7, 100}});
    QVERIFY(request(server->port(), "GET", "/metrics").body.find("kvscope_evictions_total 1\n") != std::string::npos);
  }

  void otherPathsAreNotFound() {
    RunMetrics metrics;
    std::string error;
    auto server = MetricsHttpServer::start("127.0.0.1:0", false, metrics, &error);
    QVERIFY2(server, error.c_str());
    for (const char* path : {"/", "/metric", "/metrics/x", "/api/v1/query"}) {
      const Reply r = request(server->port(), "GET", path);
      QCOMPARE(r.status, 404);
      QVERIFY(r.body.find("only serves /metrics") != std::string::npos);
    }
  }

  void aBusyPortIsAnError() {
    RunMetrics metrics;
    std::string error;
    auto first = MetricsHttpServer::start("127.0.0.1:0", false, metrics, &error);
    QVERIFY2(first, error.c_str());
    const std::string listen = "127.0.0.1:" + std::to_string(first->port());
    auto second = MetricsHttpServer::start(listen, false, metrics, &error);
    QVERIFY(!second);
    QCOMPARE(error, "metrics: cannot listen on " + listen + ": Address already in use");
    // The first one still answers (it did not lose half its connections to the second).
    QCOMPARE(request(first->port(), "GET", "/metrics").status, 200);
  }

  void aNonLoopbackAddressNeedsInsecure() {
    RunMetrics metrics;
    std::string error;
    QVERIFY(!MetricsHttpServer::start("0.0.0.0:0", false, metrics, &error));
    QVERIFY2(error.rfind("metrics: refusing to listen on '0.0.0.0:0': ", 0) == 0, error.c_str());
    QVERIFY2(error.find("--insecure") != std::string::npos, error.c_str());
    auto server = MetricsHttpServer::start("0.0.0.0:0", true, metrics, &error);
    QVERIFY2(server, error.c_str());
    QCOMPARE(request(server->port(), "GET", "/metrics").status, 200);
  }

  void aMalformedAddressIsNamed() {
    RunMetrics metrics;
    std::string error;
    QVERIFY(!MetricsHttpServer::start("9464", false, metrics, &error));
    QVERIFY2(error.rfind("metrics: --metrics '9464': expected HOST:PORT", 0) == 0, error.c_str());
    QVERIFY(!MetricsHttpServer::start("127.0.0.1:99999", false, metrics, &error));
    QVERIFY2(error.find("0..65535") != std::string::npos, error.c_str());
  }

  // Idle connections and clients that send their request a byte at a time hold nothing;
  // a scrape is answered while they are connected (within 5 s: a generous bound, the answer is
  // immediate), they are closed at the request deadline, and past kMaxConnections the oldest idle
  // one makes room.
  void answersWhileClientsSitIdleOrTrickle() {
    RunMetrics metrics;
    std::string error;
    auto server = MetricsHttpServer::start("127.0.0.1:0", false, metrics, &error);
    QVERIFY2(server, error.c_str());
    const int port = server->port();
    std::vector<int> idle;
    for (int i = 0; i < 16; ++i) idle.push_back(connectTo(port, 30));
    std::atomic<bool> stop{false};
    std::vector<std::thread> tricklers;
    for (int i = 0; i < 2; ++i)
      tricklers.emplace_back([&, port] {
        const int fd = connectTo(port);
        const std::string text = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
        for (std::size_t k = 0; !stop && fd >= 0; ++k) {
          if (::send(fd, text.data() + k % text.size(), 1, MSG_NOSIGNAL) != 1) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        if (fd >= 0) ::close(fd);
      });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (int round = 0; round < 3; ++round) {
      const Reply r = request(port, "GET", "/metrics", 5);
      QCOMPARE(r.status, 200);
    }
    // At the request deadline the server closes the idle ones (a read sees the end, not a timeout).
    char byte;
    QCOMPARE(::recv(idle.front(), &byte, 1, 0), ssize_t{0});
    stop = true;
    for (auto& t : tricklers) t.join();
    for (int fd : idle) ::close(fd);

    // More idle connections than the server keeps: the newest scrape still gets in.
    idle.clear();
    for (std::size_t i = 0; i < MetricsHttpServer::kMaxConnections + 36; ++i) idle.push_back(connectTo(port, 30));
    QCOMPARE(request(port, "GET", "/metrics", 5).status, 200);
    for (int fd : idle) ::close(fd);
  }

  // A request head that never ends is refused, not buffered without bound.
  void anOversizedRequestIsRefused() {
    RunMetrics metrics;
    std::string error;
    auto server = MetricsHttpServer::start("127.0.0.1:0", false, metrics, &error);
    QVERIFY2(server, error.c_str());
    const int fd = connectTo(server->port(), 5);
    const std::string big =
        "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(MetricsHttpServer::kMaxRequestBytes + 100, 'a');
    ::send(fd, big.data(), big.size(), MSG_NOSIGNAL);
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    ::close(fd);
    QVERIFY(n > 12);
    QCOMPARE(std::string(buf, 12), std::string("HTTP/1.1 431"));
    QCOMPARE(request(server->port(), "GET", "/metrics", 5).status, 200);
  }

  // stop() right after start() returns (the accept loop is running by then), and twice is harmless.
  void stopsAtOnceAndTwice() {
    RunMetrics metrics;
    std::string error;
    for (int i = 0; i < 20; ++i) {
      auto server = MetricsHttpServer::start("127.0.0.1:0", false, metrics, &error);
      QVERIFY2(server, error.c_str());
      const int port = server->port();
      server->stop();
      server->stop();
      QCOMPARE(request(port, "GET", "/metrics").status, 0);  // nothing listens any more
    }
  }
};

QTEST_GUILESS_MAIN(TestMetricsHttpServer)
#include "test_metrics_http_server.moc"
