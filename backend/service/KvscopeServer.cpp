#include "backend/service/KvscopeServer.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "backend/service/BearerToken.h"
#include "backend/service/ControlService.h"
#include "backend/service/RouterService.h"
#include "backend/service/TelemetryService.h"

namespace kvscope {

namespace {

// Long enough for a unary call to finish, short enough that Ctrl-C feels immediate; streams still
// open after it are cancelled.
constexpr auto kShutdownDeadline = std::chrono::seconds(2);

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Reads a whole PEM file; `option` and the path name what is wrong in the message.
std::optional<std::string> readPem(const std::string& option, const std::string& path, std::string_view marker,
                                   std::string* error) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) {
    *error = option + " '" + path + "': cannot read the file (missing, unreadable or empty)";
    return std::nullopt;
  }
  // gRPC only says "handshaker creation failed" for a bad PEM; naming the file here is kinder.
  if (text.str().find(marker) == std::string::npos) {
    *error = option + " '" + path + "': not a PEM file with a '" + std::string(marker) + "' block";
    return std::nullopt;
  }
  return text.str();
}

// Insecure, or TLS from the --tls-cert and --tls-key PEM files (both or neither); nullptr and
// `error` when they cannot be used.
std::shared_ptr<grpc::ServerCredentials> serverCredentials(const ServerOptions& options, std::string* error) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    *error = options.tls_cert.empty() ? "--tls-key '" + options.tls_key + "' given without --tls-cert"
                                      : "--tls-cert '" + options.tls_cert + "' given without --tls-key";
    return nullptr;
  }
  if (options.tls_cert.empty()) return grpc::InsecureServerCredentials();
  const auto cert = readPem("--tls-cert", options.tls_cert, "BEGIN CERTIFICATE", error);
  if (!cert) return nullptr;
  const auto key = readPem("--tls-key", options.tls_key, "PRIVATE KEY", error);
  if (!key) return nullptr;
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

// The socket file is the whole access control of a Unix socket: only this user may connect,
// whatever the umask left (an abstract socket has no file). Returns the socket file's path when
// chmod failed (errno says why).
std::optional<std::string> unrestrictedSocket(const std::string& listen) {
  if (!startsWith(listen, "unix:")) return std::nullopt;
  std::string path = listen.substr(5);
  if (startsWith(path, "//")) path.erase(0, 2);  // unix:///abs/path
  if (::chmod(path.c_str(), S_IRUSR | S_IWUSR) != 0) return path;
  return std::nullopt;
}

}  // namespace

KvscopeServer::KvscopeServer() = default;

KvscopeServer::~KvscopeServer() { shutdown(); }

std::optional<std::string> KvscopeServer::listenRefusal(const ServerOptions& options) {
  // A unix socket is reachable only through the file system of this machine: local like loopback.
  if (startsWith(options.listen, "unix:") || startsWith(options.listen, "unix-abstract:")) return std::nullopt;
  std::string host, message;
  int port = 0;
  if (!splitListenAddress(options.listen, &host, &port, &message)) return "--listen " + message;
  if (!isLoopbackHost(host) && options.token_file.empty() && !options.insecure)
    return "refusing to listen on '" + options.listen +
           "' without a token: anyone who can reach that address could steer the run. Give --token-file FILE "
           "(with --tls-cert/--tls-key so the token does not travel in clear), listen on 127.0.0.1, "
           "or pass --insecure if the network is trusted";
  return std::nullopt;
}

std::unique_ptr<KvscopeServer> KvscopeServer::start(const ServerOptions& options, TelemetryHub& hub, RunControl& run,
                                                    std::string* error, LiveRouter* router,
                                                    const WhatIfForecaster* forecaster) {
  std::string message;
  const auto fail = [&](std::string why) -> std::unique_ptr<KvscopeServer> {
    if (error) *error = std::move(why);
    return nullptr;
  };

  if (auto refused = listenRefusal(options)) return fail(*refused);
  const bool unix_socket = startsWith(options.listen, "unix:") || startsWith(options.listen, "unix-abstract:");
  std::string host;
  int requested_port = 0;
  if (!unix_socket) splitListenAddress(options.listen, &host, &requested_port, &message);

  std::optional<BearerToken> token;
  if (!options.token_file.empty()) {
    token = BearerToken::fromFile(options.token_file, &message);
    if (!token) return fail("--token-file: " + message);
  }

  const std::shared_ptr<grpc::ServerCredentials> credentials = serverCredentials(options, &message);
  if (!credentials) return fail(message);

  // Both are process-wide switches read when a server is built; set them once before the first.
  static std::once_flag plugins;
  std::call_once(plugins, [] {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  });

  std::unique_ptr<KvscopeServer> server(new KvscopeServer());
  // One count of failures per address for every service: a guesser cannot spread its guesses over them.
  server->throttle_ = std::make_shared<AuthFailureThrottle>(options.auth_throttle);
  const CallAuthorization guarded(token, server->throttle_, options.log);
  server->telemetry_ = std::make_unique<TelemetryService>(hub, &run);
  // The token covers the run's stream too, unless the operator keeps it open (--open-telemetry).
  server->telemetry_->guard(options.open_telemetry ? CallAuthorization() : guarded,
                            TelemetryService::Limits{options.max_subscribers, options.max_subscribers_per_host,
                                                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                         std::chrono::duration<double>(options.stalled_subscriber_s))});
  server->telemetry_->reportRefusalsOf(guarded);
  if (router) server->router_ = std::make_unique<RouterService>(*router, guarded);
  server->control_ = std::make_unique<ControlService>(run, hub, guarded, forecaster, options.log);
  server->tls_ = !options.tls_cert.empty();
  server->token_required_ = !options.token_file.empty();

  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default on Linux: a second server on a busy port would then start
  // "successfully" and silently take half the connections. A busy port must be an error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int bound_port = 0;
  builder.AddListeningPort(options.listen, credentials, &bound_port);
  builder.RegisterService(server->telemetry_.get());
  builder.RegisterService(server->control_.get());
  if (server->router_) builder.RegisterService(server->router_.get());
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || (!unix_socket && bound_port == 0))
    return fail("cannot listen on '" + options.listen +
                "': the address is in use, not one of this machine's, or the TLS key does not match the certificate");

  if (const auto path = unrestrictedSocket(options.listen)) {
    // Read before Shutdown(), whose threads and syscalls may overwrite errno.
    const std::string why = std::strerror(errno);
    server->server_->Shutdown();
    return fail("cannot restrict the socket '" + *path + "' to its owner: " + why);
  }

  if (auto* health = server->server_->GetHealthCheckService()) {
    health->SetServingStatus(true);
    health->SetServingStatus(v1::Control::service_full_name(), true);
    health->SetServingStatus(v1::Telemetry::service_full_name(), true);
    if (server->router_) health->SetServingStatus(v1::Router::service_full_name(), true);
  }
  server->port_ = unix_socket ? 0 : bound_port;
  server->address_ = unix_socket ? options.listen : joinHostPort(host, bound_port);
  return server;
}

void KvscopeServer::shutdown() {
  if (!server_ || stopped_.exchange(true)) return;
  // Load balancers and watchers see NOT_SERVING before the port closes.
  if (auto* health = server_->GetHealthCheckService()) health->SetServingStatus(false);
  server_->Shutdown(std::chrono::system_clock::now() + kShutdownDeadline);
}

void KvscopeServer::wait() {
  if (server_) server_->Wait();
}

}  // namespace kvscope
