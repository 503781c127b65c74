#pragma once
// The shared secret that guards Control (serve --token-file): read once from a file, then checked
// against each call's `authorization: Bearer <token>` metadata in constant time. The token never
// appears in an error message, a log line or a status: only the file's name does.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope {

// True when `a` and `b` are equal. Its running time depends only on the longer length, never on
// the position of the first differing byte, so a client timing refusals cannot guess the token a
// byte at a time (what an early-exit memcmp or operator== would allow).
bool constantTimeEquals(std::string_view a, std::string_view b);

class BearerToken {
 public:
  static constexpr std::size_t kMinTokenBytes = 12;

  // The file holds one token; surrounding whitespace (a trailing newline from `echo`) is trimmed.
  // An unreadable, empty or oversized file, a token shorter than kMinTokenBytes, or one with
  // characters HTTP/2 metadata cannot carry (spaces, control bytes, non-ASCII), gives nullopt and a
  // message naming the file.
  static std::optional<BearerToken> fromFile(const std::string& path, std::string* error);

  // `token` must be non-empty printable ASCII without spaces (checked by fromFile).
  explicit BearerToken(std::string token) : token_(std::move(token)) {}

  // `authorization` is one metadata value, e.g. "Bearer abc". The scheme is case-insensitive
  // (RFC 7235); the token is compared exactly, in constant time.
  bool accepts(std::string_view authorization) const;
  // What a client sends: "Bearer <token>" (kvscope-cli mark, the console's remote control).
  std::string authorization() const { return "Bearer " + token_; }

 private:
  std::string token_;
};

}  // namespace kvscope
