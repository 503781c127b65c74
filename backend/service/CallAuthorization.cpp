#include "service/CallAuthorization.h"

#include <iterator>

namespace kvscope {

bool callAuthorized(const std::optional<BearerToken>& token, const grpc::CallbackServerContext& ctx) {
  if (!token) return true;
  // Exactly one authorization header: several on one call would let a client try many guesses per call.
  const auto [first, last] = ctx.client_metadata().equal_range("authorization");
  if (first == last || std::next(first) != last) return false;
  return token->accepts(std::string_view(first->second.data(), first->second.size()));
}

grpc::Status unauthenticatedStatus() {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      "missing or wrong bearer token: send metadata 'authorization: Bearer <token>' "
                      "with the token from the server's --token-file");
}

}  // namespace kvscope
