#include "bench/soak/MetricsProbe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace kvscope::soak {

namespace {

using Clock = std::chrono::steady_clock;

int connectTo(const std::string& host, int port, bool nonblocking) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One GET /metrics, the whole answer read (the server closes after it); true for a 200 within `limit`.
bool scrape(const std::string& host, int port, std::chrono::milliseconds limit, std::string& body) {
  const auto deadline = Clock::now() + limit;
  const int fd = connectTo(host, port, false);
  if (fd < 0) return false;
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  bool ok = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  std::string head;
  char buf[16384];
  while (ok) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) {
      ok = false;
      break;
    }
    const ssize_t got = ::recv(fd, buf, sizeof buf, 0);
    if (got < 0) ok = false;
    if (got <= 0) break;
    if (head.size() < 32) head.append(buf, static_cast<std::size_t>(std::min<ssize_t>(got, 32)));
    if (body.size() < (std::size_t{4} << 20)) body.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return ok && head.rfind("HTTP/1.1 200", 0) == 0;
}

}  // namespace

MetricsProbe::MetricsProbe(const std::string& host_port, int scrape_interval_ms, int idle, int trickle)
    : interval_ms_(scrape_interval_ms), idle_(idle), trickle_(trickle) {
  const auto colon = host_port.rfind(':');
  host_ = host_port.substr(0, colon);
  port_ = std::stoi(host_port.substr(colon + 1));
  scraper_ = std::thread([this] { scrapeLoop(); });
  hostile_ = std::thread([this] { hostileLoop(); });
}

MetricsProbe::~MetricsProbe() {
  stop_ = true;
  scraper_.join();
  hostile_.join();
}

double MetricsProbe::sumOf(const std::string& exposition, const std::string& name) {
  double sum = 0;
  std::size_t at = 0;
  while ((at = exposition.find(name, at)) != std::string::npos) {
    const bool line_start = at == 0 || exposition[at - 1] == '\n';
    const char next = at + name.size() < exposition.size() ? exposition[at + name.size()] : '\n';
    at += name.size();
    if (!line_start || (next != '{' && next != ' ')) continue;
    const std::size_t end = exposition.find('\n', at);
    const std::string line = exposition.substr(at, end == std::string::npos ? std::string::npos : end - at);
    const std::size_t space = line.rfind(' ');
    if (space != std::string::npos) sum += std::strtod(line.c_str() + space + 1, nullptr);
  }
  return sum;
}

MetricsProbe::Counts MetricsProbe::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void MetricsProbe::scrapeLoop() {
  auto next = Clock::now();
  while (!stop_) {
    const auto start = Clock::now();
    std::string body;
    const bool ok = scrape(host_, port_, std::chrono::seconds(15), body);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    {
      std::lock_guard lock(mutex_);
      if (ok) {
        counts_.scrape_ms.push_back(ms);
        counts_.last_body = std::move(body);
      } else {
        ++counts_.scrape_failures;
      }
    }
    next += std::chrono::milliseconds(interval_ms_);
    while (!stop_ && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void MetricsProbe::hostileLoop() {
  struct Hostile {
    int fd = -1;
    bool trickle = false;
    std::size_t sent = 0;
  };
  static const std::string kHead = "GET /metrics HTTP/1.1\r\nHost: soak\r\nX-Padding: ";
  std::vector<Hostile> sockets(static_cast<std::size_t>(idle_ + trickle_));
  for (std::size_t i = 0; i < sockets.size(); ++i) sockets[i].trickle = static_cast<int>(i) >= idle_;
  auto next_byte = Clock::now();
  while (!stop_) {
    for (auto& s : sockets)
      if (s.fd < 0) {
        s.fd = connectTo(host_, port_, true);
        s.sent = 0;
      }
    // A socket the server closed reads as end of file (or an error): count it, open it again next turn.
    std::vector<pollfd> polls;
    for (auto& s : sockets) polls.push_back({s.fd, POLLIN, 0});
    ::poll(polls.data(), polls.size(), 100);
    long idle_open = 0, trickle_open = 0, closed = 0;
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      auto& s = sockets[i];
      if (s.fd < 0) continue;
      if (polls[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[512];
        const ssize_t got = ::recv(s.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          ::close(s.fd);
          s.fd = -1;
          ++closed;
          continue;
        }
      }
      (s.trickle ? trickle_open : idle_open) += 1;
    }
    if (Clock::now() >= next_byte) {
      next_byte += std::chrono::seconds(1);
      for (auto& s : sockets)
        if (s.fd >= 0 && s.trickle) {
          const char c = s.sent < kHead.size() ? kHead[s.sent] : 'x';  // a header that never ends
          if (::send(s.fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) ++s.sent;
        }
    }
    std::lock_guard lock(mutex_);
    counts_.idle_open = idle_open;
    counts_.trickle_open = trickle_open;
    counts_.hostile_closed += closed;
  }
  for (auto& s : sockets)
    if (s.fd >= 0) ::close(s.fd);
}

}  // namespace kvscope::soak
