#include "backend/service/AuthFailureThrottle.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>

namespace kvscope {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// "10.1.2.3:5000" -> "10.1.2.3"; "[::1]:5000" -> "::1".
std::string_view hostOf(std::string_view address) {
  if (startsWith(address, "[")) {
    const auto close = address.find(']');
    return close == std::string_view::npos ? address.substr(1) : address.substr(1, close - 1);
  }
  const auto colon = address.rfind(':');
  return colon == std::string_view::npos ? address : address.substr(0, colon);
}

}  // namespace

AuthFailureThrottle::AuthFailureThrottle(Policy policy) : policy_(std::move(policy)) {}

std::string AuthFailureThrottle::peerKey(std::string_view peer) {
  if (startsWith(peer, "unix:") || startsWith(peer, "unix-abstract:")) return "unix";
  if (startsWith(peer, "ipv4:")) {
    const std::string host(hostOf(peer.substr(5)));
    return startsWith(host, "127.") ? "loopback" : host;  // 127/8 is one machine whatever source it picks
  }
  if (startsWith(peer, "ipv6:")) {
    const std::string host(hostOf(peer.substr(5)));
    in6_addr a{};
    if (::inet_pton(AF_INET6, host.c_str(), &a) != 1) return host;
    const unsigned char* b = a.s6_addr;
    // An IPv4 client on a dual-stack socket (::ffff:a.b.c.d) is that IPv4 host.
    static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    char text[64];
    if (std::equal(kMapped, kMapped + 12, b)) {
      if (b[12] == 127) return "loopback";
      std::snprintf(text, sizeof text, "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
      return text;
    }
    if (IN6_IS_ADDR_LOOPBACK(&a)) return "loopback";
    // One machine usually holds a whole /64: counting single addresses would let it rotate through them.
    std::snprintf(text, sizeof text, "%x:%x:%x:%x::/64", (b[0] << 8) | b[1], (b[2] << 8) | b[3], (b[4] << 8) | b[5],
                  (b[6] << 8) | b[7]);
    return text;
  }
  return std::string(peer);  // an unknown transport: its whole name
}

void AuthFailureThrottle::refillLocked(Clock::time_point t) {
  const double capacity = std::max(1, policy_.global_failures_per_minute);
  if (!bucket_started_) {
    bucket_ = capacity;
    bucket_at_ = t;
    bucket_started_ = true;
  }
  const double minutes = std::chrono::duration<double>(t - bucket_at_).count() / 60.0;
  bucket_ = std::min(capacity, bucket_ + minutes * capacity);
  bucket_at_ = t;
}

AuthFailureThrottle::Clock::duration AuthFailureThrottle::globalLockLocked(Clock::time_point t) {
  refillLocked(t);
  if (bucket_ >= 1) return Clock::duration::zero();
  const double capacity = std::max(1, policy_.global_failures_per_minute);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((1 - bucket_) * 60.0 / capacity));
}

AuthFailureThrottle::Clock::duration AuthFailureThrottle::lockedFor(std::string_view peer) {
  const auto t = now();
  std::lock_guard lock(mutex_);
  const Clock::duration global = globalLockLocked(t);
  const auto it = peers_.find(peerKey(peer));
  if (it == peers_.end() || it->second.locked_until <= t) return global;
  return std::max(global, it->second.locked_until - t);
}

AuthFailureThrottle::Clock::duration AuthFailureThrottle::failed(std::string_view peer) {
  const auto t = now();
  std::string key = peerKey(peer);
  std::lock_guard lock(mutex_);
  refillLocked(t);
  bucket_ = std::max(0.0, bucket_ - 1);
  auto it = peers_.find(key);
  if (it == peers_.end()) {
    if (peers_.size() >= policy_.max_peers) evictLocked(t);
    it = peers_.emplace(std::move(key), Entry{}).first;
  }
  Entry& e = it->second;
  if (e.failures > 0 && t - e.last_failure >= policy_.forget_after) e = Entry{};  // quiet long enough: afresh
  ++e.failures;
  e.last_failure = t;
  const int over = e.failures - policy_.free_failures;
  if (over <= 0) return Clock::duration::zero();
  // Doubling per failure past the free ones; the shift is bounded so it cannot overflow.
  auto lockout = policy_.first_lockout * (std::int64_t{1} << std::min(over - 1, 30));
  lockout = std::min<Clock::duration>(lockout, policy_.max_lockout);
  e.locked_until = t + lockout;
  return lockout;
}

std::vector<AuthFailureThrottle::Failing> AuthFailureThrottle::failing(std::size_t at_most) const {
  const auto t = now();
  std::vector<Failing> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [peer, e] : peers_)
      if (e.failures > 0 && t - e.last_failure < policy_.forget_after)
        out.push_back({peer, e.failures, t - e.last_failure, std::max(Clock::duration::zero(), e.locked_until - t)});
  }
  std::sort(out.begin(), out.end(), [](const Failing& a, const Failing& b) { return a.since_last < b.since_last; });
  if (out.size() > at_most) out.resize(at_most);
  return out;
}

std::size_t AuthFailureThrottle::trackedPeers() const {
  std::lock_guard lock(mutex_);
  return peers_.size();
}

void AuthFailureThrottle::evictLocked(Clock::time_point t) {
  // Forgotten entries first (they would start afresh anyway); a locked-out one is kept while any
  // other can go, so a flood of new addresses does not simply wipe a lockout.
  absl::erase_if(peers_, [&](const auto& kv) {
    return t - kv.second.last_failure >= policy_.forget_after && kv.second.locked_until <= t;
  });
  if (peers_.size() < policy_.max_peers) return;
  auto victim = peers_.end();
  for (auto it = peers_.begin(); it != peers_.end(); ++it) {
    const bool locked = it->second.locked_until > t;
    if (victim == peers_.end()) {
      victim = it;
      continue;
    }
    const bool victim_locked = victim->second.locked_until > t;
    if (locked != victim_locked ? !locked : it->second.last_failure < victim->second.last_failure) victim = it;
  }
  if (victim != peers_.end()) peers_.erase(victim);
}

}  // namespace kvscope
