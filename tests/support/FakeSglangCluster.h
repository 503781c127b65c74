#pragma once
// A small lab-like live cluster on this machine for the live-source and console tests: a real
// cpp-httplib server answering one SGLang worker's /metrics with the published fixture, a port
// nobody listens on for a worker that is down, and real log files the test appends to. The
// cluster file it writes names D0 (scraped, with a log), D1 (its /metrics refuses connections)
// and P0 (a log only), optionally with a `router:` section.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>

#include "tests/support/Fixtures.h"

namespace kvscope::test {

inline void appendTo(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }

// A port that refuses connections: bound (never listened on), then closed.
inline int closedPort() {
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

class FakeSglangCluster {
 public:
  // `dir` holds the cluster file and the logs (each starts with a line of history).
  explicit FakeSglangCluster(std::string dir, bool with_router = false) : dir_(std::move(dir)) {
    const std::string body = fixture("sglang_metrics_sample.txt");
    server_.Get("/metrics",
                [body](const httplib::Request&, httplib::Response& r) { r.set_content(body, "text/plain"); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (const char* log : {"d0.log", "p0.log"})
      appendTo(path(log), "[2025-06-01 11:59:00 TP0] history before the session\n");
    std::ofstream(file()) << "name: lab-local\n"
                             "scrape_interval_s: 0.1\n"
                          << (with_router ? "router: {policy: kv-aware, knobs: {K: 50}}\n" : "")
                          << "workers:\n"
                             "  - id: D0\n"
                             "    role: decode\n"
                             "    metrics: http://127.0.0.1:"
                          << port_
                          << "/metrics\n"
                             "    logs: d0.log\n"
                             "  - id: D1\n"
                             "    role: decode\n"
                             "    metrics: http://127.0.0.1:"
                          << closedPort()
                          << "/metrics\n"
                             "  - {id: P0, role: prefill, logs: p0.log}\n";
  }
  ~FakeSglangCluster() {
    server_.stop();
    thread_.join();
  }
  std::string file() const { return path("cluster.yaml"); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // SGLang's scheduler crash as D0's log writes it: the exception line, then its traceback.
  void crashD0() const {
    appendTo(path("d0.log"),
             "[2025-06-01 12:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
             "  File \"/sgl/managers/scheduler.py\", line 2310, in event_loop_normal_disagg_decode\n"
             "    assert seq_len - pre_len == req.extend_input_len\n"
             "AssertionError\n");
  }

 private:
  std::string dir_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace kvscope::test
