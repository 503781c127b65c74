#include "service/KvscopeServer.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "service/BearerToken.h"
#include "service/ControlService.h"
#include "service/TelemetryService.h"

namespace kvscope {

namespace {

// Long enough for a unary call to finish, short enough that Ctrl-C feels immediate; streams still
// open after it are cancelled.
constexpr auto kShutdownDeadline = std::chrono::seconds(2);

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

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

}  // namespace

bool isLoopbackHost(std::string_view host) {
  if (equalsIgnoreCase(host, "localhost")) return true;
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  return false;
}

bool splitListenAddress(std::string_view listen, std::string* host, int* port, std::string* error) {
  const auto fail = [&](const std::string& why) {
    if (error) *error = "'" + std::string(listen) + "': " + why;
    return false;
  };
  std::string_view port_text;
  if (startsWith(listen, "[")) {
    const auto close = listen.find(']');
    if (close == std::string_view::npos || listen.substr(close + 1, 1) != ":")
      return fail("expected [IPV6]:PORT, e.g. [::1]:50051");
    *host = std::string(listen.substr(1, close - 1));
    port_text = listen.substr(close + 2);
  } else {
    const auto colon = listen.rfind(':');
    if (colon == std::string_view::npos) return fail("expected HOST:PORT, e.g. 127.0.0.1:50051");
    *host = std::string(listen.substr(0, colon));
    if (host->find(':') != std::string::npos) return fail("write an IPv6 address in brackets, e.g. [::1]:50051");
    port_text = listen.substr(colon + 1);
  }
  if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string_view::npos)
    return fail("the port must be a number in 0..65535 (0 = any free port)");
  const int value = std::stoi(std::string(port_text));
  if (value > 65535) return fail("the port must be a number in 0..65535 (0 = any free port)");
  *port = value;
  return true;
}

KvscopeServer::KvscopeServer() = default;

KvscopeServer::~KvscopeServer() { shutdown(); }

std::unique_ptr<KvscopeServer> KvscopeServer::start(const ServerOptions& options, TelemetryHub& hub, RunControl& run,
                                                    std::string* error) {
  std::string message;
  const auto fail = [&](std::string why) -> std::unique_ptr<KvscopeServer> {
    if (error) *error = std::move(why);
    return nullptr;
  };

  // A unix socket is reachable only through the file system of this machine: local like loopback.
  const bool unix_socket = startsWith(options.listen, "unix:") || startsWith(options.listen, "unix-abstract:");
  std::string host;
  int requested_port = 0;
  if (!unix_socket && !splitListenAddress(options.listen, &host, &requested_port, &message))
    return fail("--listen " + message);

  std::optional<BearerToken> token;
  if (!options.token_file.empty()) {
    token = BearerToken::fromFile(options.token_file, &message);
    if (!token) return fail("--token-file: " + message);
  }
  if (!unix_socket && !isLoopbackHost(host) && !token && !options.insecure)
    return fail("refusing to listen on '" + options.listen +
                "' without a token: anyone who can reach that address could steer the run. Give --token-file FILE "
                "(with --tls-cert/--tls-key so the token does not travel in clear), listen on 127.0.0.1, "
                "or pass --insecure if the network is trusted");

  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (options.tls_cert.empty() != options.tls_key.empty())
    return fail(options.tls_cert.empty() ? "--tls-key '" + options.tls_key + "' given without --tls-cert"
                                         : "--tls-cert '" + options.tls_cert + "' given without --tls-key");
  if (!options.tls_cert.empty()) {
    const auto cert = readPem("--tls-cert", options.tls_cert, "BEGIN CERTIFICATE", &message);
    if (!cert) return fail(message);
    const auto key = readPem("--tls-key", options.tls_key, "PRIVATE KEY", &message);
    if (!key) return fail(message);
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    credentials = grpc::SslServerCredentials(ssl);
  }

  // Both are process-wide switches read when a server is built; set them once before the first.
  static std::once_flag plugins;
  std::call_once(plugins, [] {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  });

  std::unique_ptr<KvscopeServer> server(new KvscopeServer());
  server->telemetry_ = std::make_unique<TelemetryService>(hub, &run);
  server->control_ = std::make_unique<ControlService>(run, hub, std::move(token));
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
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || (!unix_socket && bound_port == 0))
    return fail("cannot listen on '" + options.listen +
                "': the address is in use, not one of this machine's, or the TLS key does not match the certificate");

  if (auto* health = server->server_->GetHealthCheckService()) {
    health->SetServingStatus(true);
    health->SetServingStatus(v1::Control::service_full_name(), true);
    health->SetServingStatus(v1::Telemetry::service_full_name(), true);
  }
  server->port_ = unix_socket ? 0 : bound_port;
  server->address_ = unix_socket ? options.listen
                                 : (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                                       std::to_string(bound_port);
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
