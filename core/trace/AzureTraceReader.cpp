#include "core/trace/AzureTraceReader.h"
#include "core/io/InputFile.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>
#include <vector>

#include "core/model/Error.h"
#include "core/trace/BlockChain.h"

namespace kvscope {

namespace {

constexpr std::string_view kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";
constexpr std::uint64_t kAzureSalt = mixHash(0x617a757265000000ULL, 1);
constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kTicksPerSecond = 10'000'000;  // the trace's 7 fractional digits

// Reads exactly `n` decimal digits at `pos`.
bool digits(std::string_view s, std::size_t& pos, int n, int& out) {
  if (pos + static_cast<std::size_t>(n) > s.size()) return false;
  out = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos++];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

bool expect(std::string_view s, std::size_t& pos, char c) { return pos < s.size() && s[pos++] == c; }

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t daysFromCivil(int y, int m, int d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + doe - 719468;
}

int daysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// "YYYY-MM-DD HH:MM:SS[.fffffff]" -> 100 ns ticks since 1970, or false.
bool parseTimestamp(std::string_view s, std::int64_t& ticks) {
  std::size_t pos = 0;
  int y, mo, d, h, mi, sec;
  if (!digits(s, pos, 4, y) || !expect(s, pos, '-') || !digits(s, pos, 2, mo) || !expect(s, pos, '-') ||
      !digits(s, pos, 2, d) || !expect(s, pos, ' ') || !digits(s, pos, 2, h) || !expect(s, pos, ':') ||
      !digits(s, pos, 2, mi) || !expect(s, pos, ':') || !digits(s, pos, 2, sec))
    return false;
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59) return false;
  std::int64_t frac = 0;
  if (pos < s.size()) {
    if (s[pos++] != '.') return false;
    const std::size_t n = s.size() - pos;
    if (n < 1 || n > 7) return false;
    for (std::size_t i = 0; i < 7; ++i) {
      int digit = 0;
      if (i < n && !digits(s, pos, 1, digit)) return false;
      frac = frac * 10 + digit;
    }
  }
  const std::int64_t secs = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  ticks = secs * kTicksPerSecond + frac;
  return true;
}

struct Row {
  const std::string& file;
  long line;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(formatInputError(file, line, field, what));
  }
  std::int32_t tokens(std::string_view column, const char* field, std::int64_t lo, const char* expected) const {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(column.data(), column.data() + column.size(), v);
    if (column.empty() || ec != std::errc() || end != column.data() + column.size() || v < lo)
      fail(field, std::string("expected ") + expected + ", got " + quotedExcerpt(column, '"', 60));
    if (v > kMaxTokens)
      fail(field, "expected at most " + std::to_string(kMaxTokens) + ", got " + quotedExcerpt(column, '"', 60));
    return static_cast<std::int32_t>(v);
  }
};

Session parseRow(const std::string& file, long line_no, std::string_view line, SessionId id, std::int64_t& ticks) {
  const Row r{file, line_no};
  std::string_view cols[3];
  std::size_t n = 0, from = 0;
  for (;;) {
    const std::size_t comma = line.find(',', from);
    if (n < 3) cols[n] = line.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from);
    ++n;
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  if (n != 3) r.fail("", "expected 3 columns (" + std::string(kHeader) + "), got " + std::to_string(n));
  if (!parseTimestamp(cols[0], ticks))
    r.fail("TIMESTAMP", "expected a time like \"2023-11-16 18:15:46.6805900\", got " + quotedExcerpt(cols[0], '"', 60));

  Turn turn;
  turn.prompt.input_tokens = r.tokens(cols[1], "ContextTokens", 1, "an integer > 0");
  turn.output_tokens = r.tokens(cols[2], "GeneratedTokens", 0, "an integer >= 0");
  // No hashes: keyed by the row alone, so no two prompts share a block.
  turn.prompt.session_scope = mixHash(kAzureSalt, static_cast<std::uint64_t>(line_no));
  turn.prompt.unique_scope = turn.prompt.session_scope;

  Session s;
  s.id = id;
  s.source = file + ":" + std::to_string(line_no);
  s.turns.push_back(std::move(turn));
  return s;
}

}  // namespace

Workload AzureTraceReader::read(const std::string& path, const TraceOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(formatInputError(path, 0, "", "is a directory, expected an Azure .csv file"));
  std::ifstream in = InputFile::open(path);
  bool too_long = false;

  auto chomp = [](std::string& s) {
    if (!s.empty() && s.back() == '\r') s.pop_back();
  };
  std::string line;
  InputFile::readLine(in, line, &too_long, path);
  chomp(line);
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a BOM from spreadsheet exports
  if (line != kHeader)
    throw InputError(formatInputError(
        path, 1, "header", "expected \"" + std::string(kHeader) + "\", got " + quotedExcerpt(line, '"', 60)));

  Workload w;
  std::vector<std::int64_t> ticks;
  SessionId next = options.first_session_id;
  long line_no = 1;
  while (InputFile::readLine(in, line, &too_long, path)) {
    ++line_no;
    chomp(line);
    if (line.empty()) continue;
    try {
      if (too_long)
        throw InputError(formatInputError(
            path, line_no, "",
            "a line longer than " + std::to_string(InputFile::kMaxLineBytes) + " bytes: not a CSV row"));
      std::int64_t t = 0;
      w.sessions.push_back(parseRow(path, line_no, line, next, t));
      ticks.push_back(t);
      ++next;
    } catch (const InputError&) {
      if (!options.lenient) throw;
      ++w.skipped_records;
    }
  }
  if (in.bad()) throw InputError(formatInputError(path, line_no + 1, "", "read error"));

  // Relative to the earliest row rather than the first, so an unsorted file never starts before 0.
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (auto t : ticks) origin = std::min(origin, t);
  for (std::size_t i = 0; i < ticks.size(); ++i)
    w.sessions[i].start_s = static_cast<double>(ticks[i] - origin) / kTicksPerSecond;
  return w;
}

}  // namespace kvscope
