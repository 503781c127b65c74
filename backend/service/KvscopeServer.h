#pragma once
// The gRPC server of `kvscope-cli serve`: Telemetry and Control around one run (and Router around a
// real cluster's router core), plus the standard
// health service and server reflection (so grpcurl-like tools and load balancers work). Safe by
// default: loopback only unless a token guards Control (or the operator says --insecure), TLS when
// given a certificate and key.
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/server.h>

#include "backend/service/AuthFailureThrottle.h"
#include "backend/service/ListenAddress.h"  // isLoopbackHost, splitListenAddress: the listen-address rules

namespace kvscope {

class ControlService;
class LiveRouter;
class RouterService;
class RunControl;
class TelemetryHub;
class TelemetryService;
class WhatIfForecaster;

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";     // HOST:PORT, [IPV6]:PORT or unix:PATH; port 0 = any free port
  std::string token_file;                     // --token-file: Control calls need this bearer token
  std::string tls_cert, tls_key;              // --tls-cert/--tls-key: PEM files, both or neither
  bool insecure = false;                      // --insecure: allow a non-loopback address without a token
  bool open_telemetry = false;                // --open-telemetry: Subscribe and GetState need no token
  std::size_t max_subscribers = 256;          // --max-subscribers: Telemetry streams open at once
  std::size_t max_subscribers_per_host = 64;  // --max-subscribers-per-host: the same, per client host
  double stalled_subscriber_s = 60;           // --stalled-subscriber: a stream not read for this long ends
  // How an address that keeps failing the token is slowed down, across all services (tests shorten it).
  AuthFailureThrottle::Policy auth_throttle;
  // The server's log: each control change with its caller's label, address and admission, and each
  // lockout of a failing address. Called from gRPC threads; empty: not logged.
  std::function<void(const std::string&)> log;
};

class KvscopeServer {
 public:
  // Checks the options, reads the token and TLS files, binds and starts serving. On failure returns
  // nullptr and a message naming the option or file. `hub` and `run` must outlive the server.
  // With a `router` (a real cluster's, usually also `run`), the Router service is served too; with a
  // `forecaster` (a simulation's, fed by its event stream), Control.Preview answers what-ifs.
  static std::unique_ptr<KvscopeServer> start(const ServerOptions& options, TelemetryHub& hub, RunControl& run,
                                              std::string* error, LiveRouter* router = nullptr,
                                              const WhatIfForecaster* forecaster = nullptr);
  ~KvscopeServer();  // shutdown()
  // The listen address alone, before anything starts: malformed, or reachable from elsewhere with no
  // token and no --insecure. The message start() would give, or nullopt. A usage error (exit 2).
  static std::optional<std::string> listenRefusal(const ServerOptions& options);

  const AuthFailureThrottle& authThrottle() const { return *throttle_; }
  int port() const { return port_; }                // the bound port (the chosen one for "host:0"); 0 for unix:
  std::string address() const { return address_; }  // the listen address with the bound port
  bool tls() const { return tls_; }
  bool tokenRequired() const { return token_required_; }

  // Reports NOT_SERVING, then stops: calls still running after a short deadline are cancelled.
  // Idempotent.
  void shutdown();
  // Blocks until shutdown() (from another thread, e.g. a signal handler's watcher).
  void wait();

 private:
  KvscopeServer();

  std::shared_ptr<AuthFailureThrottle> throttle_;
  std::unique_ptr<TelemetryService> telemetry_;
  std::unique_ptr<ControlService> control_;
  std::unique_ptr<RouterService> router_;
  std::unique_ptr<grpc::Server> server_;  // after the services: destroyed (stopped) before them
  int port_ = 0;
  std::string address_;
  bool tls_ = false;
  bool token_required_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace kvscope
