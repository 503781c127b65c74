#pragma once
// The bearer-token rule every guarded kvscope.v1 service applies (Control, Router): with a token set,
// a call needs metadata `authorization: Bearer <token>`; the refusal says what to send, never what
// was expected or received (both would leak the secret).
#include <optional>

#include <grpcpp/grpcpp.h>

#include "service/BearerToken.h"

namespace kvscope {

bool callAuthorized(const std::optional<BearerToken>& token, const grpc::CallbackServerContext& ctx);
grpc::Status unauthenticatedStatus();

}  // namespace kvscope
