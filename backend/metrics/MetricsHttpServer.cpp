#include "metrics/MetricsHttpServer.h"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <httplib.h>

#include "metrics/RunMetrics.h"
#include "service/ListenAddress.h"

namespace kvscope {

namespace {

// What Prometheus asks for when it scrapes a text-format target.
constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";
// A scrape is one small request every few seconds: two workers are plenty, and a short read/write
// timeout bounds how long stop() can wait on a stalled client.
constexpr std::size_t kWorkerThreads = 2;
constexpr time_t kIoTimeoutSeconds = 2;

}  // namespace

struct MetricsHttpServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> exited{false};
  bool stopped = false;
};

MetricsHttpServer::MetricsHttpServer() : impl_(std::make_unique<Impl>()) {}

MetricsHttpServer::~MetricsHttpServer() { stop(); }

std::unique_ptr<MetricsHttpServer> MetricsHttpServer::start(const std::string& listen, bool insecure,
                                                            const RunMetrics& metrics, std::string* error) {
  const auto fail = [&](std::string why) -> std::unique_ptr<MetricsHttpServer> {
    if (error) *error = "metrics: " + std::move(why);
    return nullptr;
  };
  std::string host, message;
  int requested_port = 0;
  if (!splitListenAddress(listen, &host, &requested_port, &message)) return fail("--metrics " + message);
  if (!isLoopbackHost(host) && !insecure)
    return fail("refusing to listen on '" + listen +
                "': the endpoint has no authentication, so anyone who can reach that address could read the run. "
                "Listen on 127.0.0.1, or pass --insecure if the network is trusted");

  std::unique_ptr<MetricsHttpServer> self(new MetricsHttpServer());
  httplib::Server& server = self->impl_->server;
  // cpp-httplib sets SO_REUSEPORT by default: a second server on a busy port would then bind
  // "successfully" and take half the scrapes. SO_REUSEADDR alone still allows a quick restart.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  // One request per connection: an idle keep-alive connection would hold a worker thread (polling)
  // and delay stop() until it times out; Prometheus reconnects cheaply at each scrape.
  server.set_keep_alive_max_count(1);
  server.set_read_timeout(kIoTimeoutSeconds);
  server.set_write_timeout(kIoTimeoutSeconds);
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server.Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.render(), kContentType);
  });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 404) res.set_content("not found: this server only serves /metrics\n", "text/plain");
  });

  // cpp-httplib only says "false"; the errno of its failed bind() is still there and names the cause
  // ("Address already in use"). A host that does not resolve leaves errno alone, hence the fallback.
  errno = 0;
  const int bound = requested_port == 0 ? server.bind_to_any_port(host)
                                        : (server.bind_to_port(host, requested_port) ? requested_port : -1);
  if (bound <= 0) {
    const int code = errno;
    return fail("cannot listen on " + listen + ": " +
                (code != 0 ? std::string(std::strerror(code)) : "the host is not an address of this machine"));
  }
  self->port_ = bound;
  self->address_ = joinHostPort(host, bound);

  Impl* impl = self->impl_.get();
  impl->thread = std::thread([impl] {
    impl->server.listen_after_bind();
    impl->exited = true;
  });
  // httplib's stop() does nothing until the accept loop runs (is_running()); waiting for it here
  // means a stop() right after start() cannot leave the thread accepting forever.
  while (!impl->server.is_running() && !impl->exited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!impl->server.is_running()) {
    impl->thread.join();
    impl->stopped = true;
    return fail("cannot listen on " + listen + ": the server stopped at once");
  }
  return self;
}

void MetricsHttpServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace kvscope
