#include "backend/service/CallAuthorization.h"

#include <iterator>
#include <string_view>

namespace kvscope {

namespace {

constexpr std::size_t kMaxPeerBytes = 128;

// Whole seconds, rounded up: "try again in 0 s" would invite an immediate retry that is refused.
long long secondsUp(AuthFailureThrottle::Clock::duration d) {
  using namespace std::chrono;
  return duration_cast<seconds>(d + seconds(1) - nanoseconds(1)).count();
}

grpc::Status lockedOutStatus(const std::string& peer, AuthFailureThrottle::Clock::duration left) {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "too many calls with a missing or wrong bearer token from " + AuthFailureThrottle::peerKey(peer) +
                          " (or from everywhere at once); a wrong token from there is refused for " +
                          std::to_string(secondsUp(left)) +
                          " s more (the right one always passes: check the token from the server's --token-file)");
}

}  // namespace

CallAuthorization::CallAuthorization(std::optional<BearerToken> token, std::shared_ptr<AuthFailureThrottle> throttle,
                                     std::function<void(const std::string&)> log)
    : token_(std::move(token)), throttle_(std::move(throttle)), log_(std::move(log)) {}

grpc::Status CallAuthorization::check(const grpc::CallbackServerContext& ctx) const {
  if (!token_) return grpc::Status::OK;
  const std::string peer = ctx.peer();
  // Exactly one authorization header: several on one call would let a client try many guesses per call.
  // The right token passes whatever the throttle says (compared in constant time): failures from the
  // same host, or from everywhere, must not lock the real client out.
  const auto [first, last] = ctx.client_metadata().equal_range("authorization");
  const bool ok = first != last && std::next(first) == last &&
                  token_->accepts(std::string_view(first->second.data(), first->second.size()));
  if (ok) return grpc::Status::OK;
  if (!throttle_) return unauthenticatedStatus();
  if (const auto left = throttle_->lockedFor(peer); left > AuthFailureThrottle::Clock::duration::zero())
    return lockedOutStatus(peer, left);
  // This call is answered as any wrong token is; the lockout it may start applies from the next one.
  if (const auto lockout = throttle_->failed(peer); lockout > AuthFailureThrottle::Clock::duration::zero() && log_)
    log_("authentication: repeated calls with a missing or wrong token from " + AuthFailureThrottle::peerKey(peer) +
         "; refusing every call from there for " + std::to_string(secondsUp(lockout)) + " s");
  return unauthenticatedStatus();
}

ChangeOrigin CallAuthorization::origin(const grpc::CallbackServerContext& ctx) const {
  return ChangeOrigin{peerAddress(ctx.peer()), token_ ? "token" : "open"};
}

std::string peerAddress(const std::string& peer) {
  std::string_view p = peer;
  for (std::string_view scheme : {"ipv4:", "ipv6:"})
    if (p.substr(0, scheme.size()) == scheme) p.remove_prefix(scheme.size());
  std::string out(p.substr(0, kMaxPeerBytes));
  // A unix socket's path is chosen by whoever started the server, but it still reaches terminals.
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || static_cast<unsigned char>(c) >= 0x80) c = '?';
  return out;
}

grpc::Status unauthenticatedStatus() {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      "missing or wrong bearer token: send metadata 'authorization: Bearer <token>' "
                      "with the token from the server's --token-file");
}

}  // namespace kvscope
