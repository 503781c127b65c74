#pragma once
// Slows down a client that keeps sending a wrong bearer token. Each address may fail a few
// times for free (a typo, a stale token file); every failure after that locks the address out for
// twice as long as the one before (1 s, 2 s, 4 s, ... up to a minute). While locked out, every call
// from it is refused at once, whatever token it carries: checking the token during a lockout would let
// a guesser keep going at full speed. Nothing sleeps: a refusal costs no gRPC thread any time.
//
// Addresses are counted by host (the port changes with every connection), an IPv6 host by its /64
// (what one machine usually holds), every Unix-socket client as one. Memory is bounded: at most
// `max_peers` addresses are tracked; a new one beyond that takes the place of the one that failed
// longest ago, and an address that has not failed for `forget_after` starts afresh.
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include <absl/container/flat_hash_map.h>

namespace kvscope {

class AuthFailureThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  struct Policy {
    int free_failures = 10;
    Clock::duration first_lockout = std::chrono::seconds(1);
    Clock::duration max_lockout = std::chrono::seconds(60);
    Clock::duration forget_after = std::chrono::minutes(10);
    std::size_t max_peers = 4096;
    std::function<Clock::time_point()> now;  // empty: Clock::now (tests give their own clock)
  };

  AuthFailureThrottle() : AuthFailureThrottle(Policy{}) {}
  explicit AuthFailureThrottle(Policy policy);

  // How much longer calls from `peer` (grpc::ServerContext::peer()) are refused; zero when it may try.
  Clock::duration lockedFor(std::string_view peer);
  // Counts a failed authentication; returns the lockout it started (zero while failures are free).
  Clock::duration failed(std::string_view peer);
  // A call from `peer` authenticated: its count starts again.
  void succeeded(std::string_view peer);

  std::size_t trackedPeers() const;
  // "ipv4:10.1.2.3:5000" -> "10.1.2.3", "ipv6:[2001:db8:1:2::9]:5000" -> "2001:db8:1:2::/64",
  // "ipv6:[::ffff:10.1.2.3]:5" -> "10.1.2.3", "unix:/x" -> "unix". What lockouts are counted by.
  static std::string peerKey(std::string_view peer);

 private:
  struct Entry {
    int failures = 0;
    Clock::time_point last_failure{};
    Clock::time_point locked_until{};
  };
  Clock::time_point now() const { return policy_.now ? policy_.now() : Clock::now(); }
  // Makes room for one more entry (mutex held): drops forgotten ones, else the oldest failure.
  void evictLocked(Clock::time_point now);

  const Policy policy_;
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, Entry> peers_;
};

}  // namespace kvscope
