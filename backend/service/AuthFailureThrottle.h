#pragma once
// Slows down a client that keeps sending a wrong bearer token. Each address may fail a few
// times for free (a typo, a stale token file); every failure after that locks the address out for
// twice as long as the one before (1 s, 2 s, 4 s, ... up to a minute). While locked out, a wrong
// token from it is refused at once; the right token always passes (CallAuthorization compares it
// first, in constant time), so a guesser on the router's own host cannot lock the real router out.
// A global budget (failures per minute, all addresses together) stops a guesser that rotates its
// source address. Nothing sleeps: a refusal costs no gRPC thread any time.
//
// Addresses are counted by host (the port changes with every connection), an IPv6 host by its /64
// (what one machine usually holds), every loopback address (127/8, ::1) as one host and every
// Unix-socket client as one. Memory is bounded: at most `max_peers` addresses are tracked; a new
// one beyond that takes the place of the one that failed longest ago, and an address that has not
// failed for `forget_after` starts afresh.
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

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
    int global_failures_per_minute = 600;    // all addresses together; over it every wrong token is refused
    std::function<Clock::time_point()> now;  // empty: Clock::now (tests give their own clock)
  };

  AuthFailureThrottle() : AuthFailureThrottle(Policy{}) {}
  explicit AuthFailureThrottle(Policy policy);

  // How much longer calls from `peer` (grpc::ServerContext::peer()) are refused; zero when it may try.
  Clock::duration lockedFor(std::string_view peer);
  // Counts a failed authentication; returns the lockout it started (zero while failures are free).
  Clock::duration failed(std::string_view peer);

  std::size_t trackedPeers() const;
  // The peers (peerKey) whose calls failed authentication within forget_after, the most recent
  // first, at most `at_most`: what the console and logs show as the origin of refused calls.
  struct Failing {
    std::string peer;
    int failures = 0;
    Clock::duration since_last{};
    Clock::duration locked_for{};  // zero when not locked out now
  };
  std::vector<Failing> failing(std::size_t at_most) const;
  // "ipv4:10.1.2.3:5000" -> "10.1.2.3", "ipv6:[2001:db8:1:2::9]:5000" -> "2001:db8:1:2::/64",
  // "ipv6:[::ffff:10.1.2.3]:5" -> "10.1.2.3", "ipv4:127.9.9.9:1" and "ipv6:[::1]:1" -> "loopback",
  // "unix:/x" -> "unix". What lockouts are counted by.
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
  // The global budget: a token bucket of failures, refilled at global_failures_per_minute.
  double bucket_ = 0;
  Clock::time_point bucket_at_{};
  bool bucket_started_ = false;
  void refillLocked(Clock::time_point t);
  Clock::duration globalLockLocked(Clock::time_point t);
};

}  // namespace kvscope
