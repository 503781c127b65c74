#pragma once
// Reading the fields of one log message into a LogRecord, for SchedulerLogParser's message parsers
// (SchedulerBatchLine, SchedulerLogPrefix): the text helpers below, and LogFieldReader, which marks
// the record Malformed at its first bad field, naming the field. Never throws.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/live/SchedulerLogParser.h"

namespace kvscope {

// Text helpers for log messages (ASCII; no allocation).
namespace logtext {

inline bool isDigit(char c) { return c >= '0' && c <= '9'; }

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

inline char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// ASCII case-insensitive find: upstream spelled some Mooncake messages both ways
// ("Failed to send kv chunk" / "Failed to send KV chunk").
inline std::size_t ifind(std::string_view text, std::string_view needle, std::size_t from = 0) {
  if (needle.size() > text.size()) return std::string_view::npos;
  for (std::size_t i = from; i + needle.size() <= text.size(); ++i) {
    std::size_t k = 0;
    while (k < needle.size() && lower(text[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

inline bool istarts(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && ifind(text.substr(0, prefix.size()), prefix) == 0;
}

// A HOST:PORT (or [v6]:PORT) token at the start of `s`, without trailing punctuation.
inline std::string_view addressAt(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] != ' ' && s[n] != ',' && s[n] != ')' && s[n] != ';' && s[n] != '\'' && s[n] != '"') ++n;
  std::string_view a = s.substr(0, n);
  while (!a.empty() && (a.back() == '.' || a.back() == ':')) a.remove_suffix(1);
  return a;
}

inline std::optional<std::int64_t> toInt(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

inline std::optional<double> toDouble(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The value after `key` up to a delimiter; quotes ('x' or "x") are removed.
inline std::optional<std::string_view> valueAfter(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + key.size());
  if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
    const char q = rest.front();
    const auto close = rest.find(q, 1);
    return close == std::string_view::npos ? rest.substr(1) : rest.substr(1, close - 1);
  }
  std::size_t n = 0;
  while (n < rest.size() && rest[n] != ',' && rest[n] != ' ' && rest[n] != ')' && rest[n] != ';') ++n;
  return rest.substr(0, n);
}

}  // namespace logtext

class LogFieldReader {
 public:
  explicit LogFieldReader(LogRecord& r) : r_(r) {}

  // The record becomes Malformed: "field 'F': expected E, got 'G...'". Only the first failure counts.
  void fail(std::string_view field, std::string_view expected, std::string_view got);
  bool failed() const { return failed_; }
  // The integer >= 0 after `key` in `text`; -1 when absent (a failure if `required`) or not such an
  // integer (a failure).
  std::int64_t integer(std::string_view text, std::string_view key, std::string_view field, bool required = true);

 private:
  LogRecord& r_;
  bool failed_ = false;
};

}  // namespace kvscope
