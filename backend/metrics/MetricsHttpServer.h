#pragma once
// The HTTP endpoint of `kvscope-cli serve --metrics`: GET /metrics answers RunMetrics' text (the
// Prometheus exposition format 0.0.4); any other path is 404. Serves on its own thread so a scrape
// never touches the simulation's. Loopback only unless `insecure`, the rule the gRPC server follows:
// the endpoint has no authentication, so anyone who reaches it reads the run.
#include <memory>
#include <string>

namespace kvscope {

class RunMetrics;

class MetricsHttpServer {
 public:
  // Binds `listen` (HOST:PORT or [IPV6]:PORT; port 0 = any free port) and starts serving. On failure
  // returns nullptr and a message starting "metrics: ". `metrics` must outlive the server.
  static std::unique_ptr<MetricsHttpServer> start(const std::string& listen, bool insecure, const RunMetrics& metrics,
                                                  std::string* error);
  ~MetricsHttpServer();  // stop()

  int port() const { return port_; }                 // the bound port (the chosen one for port 0)
  std::string address() const { return address_; }  // HOST:PORT with the bound port

  // Closes the port and waits for requests in progress. Idempotent.
  void stop();

 private:
  struct Impl;
  MetricsHttpServer();

  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::string address_;
};

}  // namespace kvscope
