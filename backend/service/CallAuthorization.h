#pragma once
// The bearer-token rule every guarded kvscope.v1 service applies (Control, Router, and Telemetry
// unless --open-telemetry): with a token set, a call needs exactly one metadata entry
// `authorization: Bearer <token>`. The refusal says what to send, never what was expected or
// received (both would leak the secret). Failures are counted per client address by the server's
// one AuthFailureThrottle, shared by its services: an address that keeps failing is refused for a
// while with RESOURCE_EXHAUSTED, before its token is looked at.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "backend/service/AuthFailureThrottle.h"
#include "backend/service/BearerToken.h"
#include "core/events/ChangeAuthor.h"

namespace kvscope {

class CallAuthorization {
 public:
  // Without a token every call is admitted ("open"). Without a throttle, failures are not slowed.
  CallAuthorization() = default;
  CallAuthorization(std::optional<BearerToken> token, std::shared_ptr<AuthFailureThrottle> throttle,
                    std::function<void(const std::string&)> log = {});

  // OK; UNAUTHENTICATED for a missing, repeated or wrong token; RESOURCE_EXHAUSTED while the caller's
  // address is locked out (saying for how long).
  grpc::Status check(const grpc::CallbackServerContext& ctx) const;

  bool required() const { return token_.has_value(); }
  // Where an admitted call came from and how it was admitted ("token" or "open"), for the events it causes.
  ChangeOrigin origin(const grpc::CallbackServerContext& ctx) const;
  // Who was refused lately (AuthFailureThrottle::failing); empty without a throttle.
  std::vector<AuthFailureThrottle::Failing> failing(std::size_t at_most) const {
    return throttle_ ? throttle_->failing(at_most) : std::vector<AuthFailureThrottle::Failing>{};
  }

 private:
  std::optional<BearerToken> token_;
  std::shared_ptr<AuthFailureThrottle> throttle_;
  std::function<void(const std::string&)> log_;
};

// ServerContext::peer() without the transport prefix: "ipv4:127.0.0.1:5000" -> "127.0.0.1:5000",
// "ipv6:[::1]:5000" -> "[::1]:5000" (unix: addresses keep theirs), cut at 128 bytes, control bytes as '?'.
std::string peerAddress(const std::string& peer);

grpc::Status unauthenticatedStatus();

}  // namespace kvscope
