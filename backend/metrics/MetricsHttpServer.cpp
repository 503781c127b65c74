#include "backend/metrics/MetricsHttpServer.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>
#include <thread>
#include <vector>

#include "backend/metrics/RunMetrics.h"
#include "backend/service/ListenAddress.h"

namespace kvscope {

namespace {

using Clock = std::chrono::steady_clock;

// What Prometheus asks for when it scrapes a text-format target.
constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

struct Connection {
  int fd = -1;
  Clock::time_point accepted;
  Clock::time_point deadline;
  std::string in;   // the request head so far
  std::string out;  // the reply, once the head is complete
  std::size_t sent = 0;
  bool replying = false;
};

std::string reply(int status, const char* reason, const std::string& content_type, const std::string& body,
                  bool head_only, const char* extra = "") {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + content_type +
                  "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n" + extra + "\r\n";
  if (!head_only) r += body;
  return r;
}

// One request per connection (Prometheus reconnects cheaply at each scrape), so only the request
// line matters: the headers are read to their end and ignored.
std::string answer(const std::string& head, const RunMetrics& metrics) {
  const auto line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0)
    return reply(400, "Bad Request", "text/plain", "bad request\n", false);
  const std::string method = line.substr(0, sp1);
  std::string path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  path = path.substr(0, path.find('?'));
  if (path != "/metrics")
    return reply(404, "Not Found", "text/plain", "not found: this server only serves /metrics\n", method == "HEAD");
  if (method != "GET" && method != "HEAD")
    return reply(405, "Method Not Allowed", "text/plain", "only GET and HEAD\n", false, "Allow: GET, HEAD\r\n");
  return reply(200, "OK", kContentType, metrics.render(), method == "HEAD");
}

}  // namespace

struct MetricsHttpServer::Impl {
  const RunMetrics* metrics = nullptr;
  int listen_fd = -1;
  int wake_fd = -1;                   // an eventfd: stop() writes it, the loop's poll wakes up
  std::list<Connection> connections;  // in accept order: the front has had the most time
  std::thread thread;
  bool stopped = false;

  ~Impl() {
    for (auto& c : connections) ::close(c.fd);
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  void run();
  void acceptAll(Clock::time_point now);
  // False when the connection is done (answered, failed or closed by the client).
  bool readFrom(Connection& c, Clock::time_point now);
  bool writeTo(Connection& c);
};

void MetricsHttpServer::Impl::acceptAll(Clock::time_point now) {
  while (true) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: all taken; anything else (EMFILE, ...): try at the next wake-up
    if (connections.size() >= kMaxConnections) {
      // Room for the newcomer: the oldest connection still sending its request goes first (it has
      // had the most time), else the oldest of all.
      auto victim =
          std::find_if(connections.begin(), connections.end(), [](const Connection& c) { return !c.replying; });
      if (victim == connections.end()) victim = connections.begin();
      ::close(victim->fd);
      connections.erase(victim);
    }
    connections.push_back(Connection{fd, now, now + kRequestDeadline, {}, {}, 0, false});
  }
}

bool MetricsHttpServer::Impl::readFrom(Connection& c, Clock::time_point now) {
  // Everything readable now (bounded, so a flooding client cannot keep the loop here): bytes past
  // the head are read and dropped, so closing after the reply never turns into a reset that could
  // cut the reply short.
  char buf[4096];
  bool closed = false;
  for (int round = 0; round < 16; ++round) {
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0) {
      closed = true;
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    if (c.in.size() <= kMaxRequestBytes) c.in.append(buf, static_cast<std::size_t>(n));
  }
  const auto end = c.in.find("\r\n\r\n");
  if (end == std::string::npos && c.in.size() <= kMaxRequestBytes) return !closed;  // more to come
  c.out = end != std::string::npos && end < kMaxRequestBytes
              ? answer(c.in.substr(0, end), *metrics)
              : reply(431, "Request Header Fields Too Large", "text/plain", "request head too large\n", false);
  c.in.clear();
  c.in.shrink_to_fit();
  c.replying = true;
  c.deadline = now + kReplyDeadline;
  return writeTo(c);
}

bool MetricsHttpServer::Impl::writeTo(Connection& c) {
  while (c.sent < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.sent += static_cast<std::size_t>(n);
  }
  ::shutdown(c.fd, SHUT_WR);  // all sent: the client sees the end of the reply
  return false;
}

void MetricsHttpServer::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<std::list<Connection>::iterator> polled;
  while (true) {
    const auto now = Clock::now();
    // Past its deadline, a connection is closed: an idle or trickling client cannot stay.
    for (auto it = connections.begin(); it != connections.end();) {
      if (it->deadline <= now) {
        ::close(it->fd);
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
    auto next = now + std::chrono::seconds(1);
    fds.assign({pollfd{wake_fd, POLLIN, 0}, pollfd{listen_fd, POLLIN, 0}});
    polled.clear();
    for (auto it = connections.begin(); it != connections.end(); ++it) {
      fds.push_back(pollfd{it->fd, static_cast<short>(it->replying ? POLLOUT : POLLIN), 0});
      polled.push_back(it);
      next = std::min(next, it->deadline);
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(0, wait))) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;  // stop()
    const auto after = Clock::now();
    for (std::size_t i = 0; i < polled.size(); ++i) {
      const short ev = fds[i + 2].revents;
      if (ev == 0) continue;
      Connection& c = *polled[i];
      const bool open = (ev & (POLLERR | POLLNVAL)) == 0 && (c.replying ? writeTo(c) : readFrom(c, after));
      if (!open) {
        ::close(c.fd);
        connections.erase(polled[i]);
      }
    }
    if (fds[1].revents != 0) acceptAll(after);
  }
}

MetricsHttpServer::MetricsHttpServer() : impl_(std::make_unique<Impl>()) {}

MetricsHttpServer::~MetricsHttpServer() { stop(); }

std::optional<std::string> MetricsHttpServer::listenRefusal(const std::string& listen, bool insecure) {
  std::string host, message;
  int port = 0;
  if (!splitListenAddress(listen, &host, &port, &message)) return "metrics: --metrics " + message;
  if (!isLoopbackHost(host) && !insecure)
    return "metrics: refusing to listen on '" + listen +
           "': the endpoint has no authentication, so anyone who can reach that address could read the run. "
           "Listen on 127.0.0.1, or pass --insecure if the network is trusted";
  return std::nullopt;
}

std::unique_ptr<MetricsHttpServer> MetricsHttpServer::start(const std::string& listen, bool insecure,
                                                            const RunMetrics& metrics, std::string* error) {
  const auto fail = [&](std::string why) -> std::unique_ptr<MetricsHttpServer> {
    if (error) *error = "metrics: " + std::move(why);
    return nullptr;
  };
  if (auto refused = listenRefusal(listen, insecure)) {
    if (error) *error = std::move(*refused);
    return nullptr;
  }
  std::string host, message;
  int requested_port = 0;
  splitListenAddress(listen, &host, &requested_port, &message);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(requested_port).c_str(), &hints, &found) != 0 || !found)
    return fail("cannot listen on " + listen + ": the host is not an address of this machine");
  std::unique_ptr<MetricsHttpServer> self(new MetricsHttpServer());
  Impl& impl = *self->impl_;
  impl.metrics = &metrics;
  int code = 0;
  for (addrinfo* a = found; a && impl.listen_fd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      code = errno;
      continue;
    }
    // SO_REUSEADDR (a quick restart binds again), never SO_REUSEPORT: a second server on a busy
    // port must fail, not take half the scrapes.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      impl.listen_fd = fd;
    } else {
      code = errno;
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (impl.listen_fd < 0) return fail("cannot listen on " + listen + ": " + std::strerror(code));
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(impl.listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  self->port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                  : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  self->address_ = joinHostPort(host, self->port_);
  impl.wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl.wake_fd < 0) return fail(std::string("cannot start: ") + std::strerror(errno));
  impl.thread = std::thread([&impl] { impl.run(); });
  return self;
}

void MetricsHttpServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(impl_->wake_fd, &one, sizeof one);
  if (impl_->thread.joinable()) impl_->thread.join();
  for (auto& c : impl_->connections) ::close(c.fd);
  impl_->connections.clear();
  ::close(impl_->listen_fd);  // the port is free once stop() returns
  impl_->listen_fd = -1;
}

}  // namespace kvscope
