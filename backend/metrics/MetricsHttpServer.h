#pragma once
// The HTTP endpoint of `kvscope-cli serve --metrics`: GET /metrics answers RunMetrics' text (the
// Prometheus exposition format 0.0.4); any other path is 404. Loopback only unless `insecure`, the
// rule the gRPC server follows: the endpoint has no authentication, so anyone who reaches it reads
// the run.
//
// No client can make it stop answering: one thread multiplexes every connection with
// poll(2), so an idle or byte-trickling client holds no worker. A request's head must arrive whole
// within kRequestDeadline of the connect, the reply be taken within kReplyDeadline; at most
// kMaxConnections are open, and a new connection beyond that evicts the oldest one still sending
// its request (the one that has had the most time), so a scraper always gets in.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace kvscope {

class RunMetrics;

class MetricsHttpServer {
 public:
  static constexpr std::size_t kMaxConnections = 64;
  static constexpr std::size_t kMaxRequestBytes = 8192;  // a request head past this is refused (431)
  static constexpr std::chrono::seconds kRequestDeadline{3};
  static constexpr std::chrono::seconds kReplyDeadline{10};

  // Binds `listen` (HOST:PORT or [IPV6]:PORT; port 0 = any free port) and starts serving. On failure
  // returns nullptr and a message starting "metrics: ". `metrics` must outlive the server.
  static std::unique_ptr<MetricsHttpServer> start(const std::string& listen, bool insecure, const RunMetrics& metrics,
                                                  std::string* error);
  ~MetricsHttpServer();  // stop()
  // The listen address alone, before anything starts: malformed, or not loopback without
  // `insecure`. The message (starting "metrics: ") start() would give, or nullopt. A usage error.
  static std::optional<std::string> listenRefusal(const std::string& listen, bool insecure);

  int port() const { return port_; }                // the bound port (the chosen one for port 0)
  std::string address() const { return address_; }  // HOST:PORT with the bound port

  // Closes the port and every connection at once (no request is waited for). Idempotent.
  void stop();

 private:
  struct Impl;
  MetricsHttpServer();

  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::string address_;
};

}  // namespace kvscope
