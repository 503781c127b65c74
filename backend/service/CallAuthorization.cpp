#include "service/CallAuthorization.h"

namespace kvscope {

bool callAuthorized(const std::optional<BearerToken>& token, const grpc::CallbackServerContext& ctx) {
  if (!token) return true;
  bool ok = false;
  const auto [first, last] = ctx.client_metadata().equal_range("authorization");
  for (auto it = first; it != last; ++it) ok |= token->accepts(std::string_view(it->second.data(), it->second.size()));
  return ok;
}

grpc::Status unauthenticatedStatus() {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      "missing or wrong bearer token: send metadata 'authorization: Bearer <token>' "
                      "with the token from the server's --token-file");
}

}  // namespace kvscope
