#include "backend/service/BearerToken.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kvscope {

namespace {

// A token is a short secret; anything bigger is the wrong file (a key, a log) and is refused
// rather than trimmed into something surprising.
constexpr std::size_t kMaxTokenFileBytes = 4096;

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool constantTimeEquals(std::string_view a, std::string_view b) {
  // Walk the longer length whatever the contents: a length mismatch is folded into the result
  // instead of returning early, and each byte difference is OR-ed in without a branch. `volatile`
  // keeps the compiler from turning the OR-reduction back into an early exit.
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  volatile unsigned char diff = static_cast<unsigned char>(a.size() != b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

std::optional<BearerToken> BearerToken::fromFile(const std::string& path, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<BearerToken> {
    if (error) *error = "token file '" + path + "': " + why;
    return std::nullopt;
  };
  // POSIX read so a directory or a permission problem reports its errno instead of reading as empty.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  char buf[1024];
  while (true) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return fail(std::string("cannot read: ") + std::strerror(err));
    }
    if (got == 0) break;
    text.append(buf, static_cast<std::size_t>(got));
    if (text.size() > kMaxTokenFileBytes) {
      ::close(fd);
      return fail("larger than 4 KiB; expected a single token");
    }
  }
  ::close(fd);

  std::size_t begin = 0, end = text.size();
  while (begin < end && isSpace(text[begin])) ++begin;
  while (end > begin && isSpace(text[end - 1])) --end;
  if (begin == end) return fail("is empty; expected a single token");
  for (std::size_t i = begin; i < end; ++i) {
    // Metadata values travel as printable ASCII; a token a client cannot send would lock everyone out.
    // The message never quotes the offending byte: it is part of the secret.
    if (text[i] < 0x21 || text[i] > 0x7e)
      return fail("the token must be one word of printable ASCII (no spaces or control characters)");
  }
  // A short token falls to guessing; the message gives the rule, never the token's length.
  if (end - begin < kMinTokenBytes)
    return fail("the token is shorter than " + std::to_string(kMinTokenBytes) +
                " characters; use a long random one (e.g. `openssl rand -hex 16`)");
  BearerToken token(text.substr(begin, end - begin));
  // Best effort: do not leave copies of the secret in freed heap memory.
  auto wipe = [](char* p, std::size_t n) {
    volatile char* v = p;
    for (std::size_t i = 0; i < n; ++i) v[i] = 0;
  };
  wipe(text.data(), text.size());
  wipe(buf, sizeof buf);
  return token;
}

bool BearerToken::accepts(std::string_view authorization) const {
  static constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() < kScheme.size()) return false;
  // The scheme is public; only the token comparison needs to be constant time.
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (lower(authorization[i]) != kScheme[i]) return false;
  return constantTimeEquals(authorization.substr(kScheme.size()), token_);
}

}  // namespace kvscope
