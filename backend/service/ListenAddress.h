#pragma once
// Parsing and the loopback rule for the addresses `kvscope-cli serve` listens on. Shared by the gRPC
// server and the metrics endpoint so both apply the same "loopback unless told otherwise" policy.
#include <string>
#include <string_view>

namespace kvscope {

// Whether a listen host only accepts connections from this machine: 127.0.0.0/8, ::1 (also as
// ::ffff:127.x.x.x) and "localhost". Any other name counts as reachable from elsewhere: it is not
// resolved (what it resolves to can change after the check).
bool isLoopbackHost(std::string_view host);

// Splits "HOST:PORT" / "[IPV6]:PORT" into host (without brackets) and port; false with a message
// on anything else.
bool splitListenAddress(std::string_view listen, std::string* host, int* port, std::string* error);

// "HOST:PORT", with an IPv6 host in brackets again: how addresses are printed back to the user.
std::string joinHostPort(const std::string& host, int port);

}  // namespace kvscope
