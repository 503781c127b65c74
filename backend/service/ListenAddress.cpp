#include "backend/service/ListenAddress.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace kvscope {

namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
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
  if (listen.substr(0, 1) == "[") {
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

std::string joinHostPort(const std::string& host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace kvscope
