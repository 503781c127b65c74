#include "core/live/SavedScrapeReader.h"
#include "core/io/InputFile.h"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/model/Error.h"

namespace kvscope {

namespace {

bool digits(std::string_view s, std::size_t from, std::size_t n, int& out) {
  if (s.size() < from + n) return false;
  const auto r = std::from_chars(s.data() + from, s.data() + from + n, out);
  return r.ec == std::errc() && r.ptr == s.data() + from + n;
}

// ".fff..." -> microseconds; `s` starts at the dot. False on anything but digits after it.
bool fraction(std::string_view s, std::int64_t& us) {
  us = 0;
  if (s.size() < 2 || s[0] != '.') return false;
  std::int64_t scale = 100000;
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    us += (s[i] - '0') * scale;
    scale /= 10;
  }
  return true;
}

}  // namespace

SavedScrapeReader::SavedScrapeReader(std::string path) : path_(std::move(path)), in_(InputFile::open(path_)) {
  std::error_code ec;
  size_ = std::filesystem::file_size(path_, ec);
}

std::optional<std::int64_t> SavedScrapeReader::parseTimeLine(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  if (s.find('-') == std::string_view::npos) {  // Unix seconds
    std::int64_t secs = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), secs);
    if (r.ec != std::errc() || secs < 0) return std::nullopt;
    std::int64_t us = 0;
    if (r.ptr != s.data() + s.size() && !fraction(s.substr(static_cast<std::size_t>(r.ptr - s.data())), us))
      return std::nullopt;
    return secs * 1'000'000 + us;
  }
  int y, mo, d, h, mi, sec;
  if (s.size() < 19) return std::nullopt;
  if (!digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' || !digits(s, 8, 2, d) ||
      (s.size() > 10 && s[10] != ' ' && s[10] != 'T') || !digits(s, 11, 2, h) || s[13] != ':' ||
      !digits(s, 14, 2, mi) || s[16] != ':' || !digits(s, 17, 2, sec))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  std::string_view rest = s.substr(19);
  // The zone, if any: dropped (see the header).
  if (const auto z = rest.find_first_of("Z+-"); z != std::string_view::npos) rest = rest.substr(0, z);
  std::int64_t us = 0;
  if (!rest.empty() && (rest[0] != '.' || !fraction(rest, us))) return std::nullopt;
  using namespace std::chrono;
  const sys_days day{year{y} / month{static_cast<unsigned>(mo)} / std::chrono::day{static_cast<unsigned>(d)}};
  return (day.time_since_epoch().count() * 86400LL + h * 3600 + mi * 60 + sec) * 1'000'000 + us;
}

bool SavedScrapeReader::readLine(std::string& line) {
  bool too_long = false;
  if (!InputFile::readLine(in_, line, &too_long, path_)) return false;
  if (too_long)
    throw InputError(formatInputError(
        path_, line_ + 1, "",
        "a line longer than " + std::to_string(InputFile::kMaxLineBytes) + " bytes: not a /metrics answer"));
  return true;
}

std::optional<SavedScrapeReader::Scrape> SavedScrapeReader::next() {
  std::string line;
  while (!pending_) {
    if (!readLine(line)) return std::nullopt;
    ++line_;
    read_ += line.size() + 1;
    if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
    const auto t = parseTimeLine(line);
    if (!t)
      throw InputError(formatInputError(path_, line_, "",
                                        "expected the time of the scrape that follows (a line like "
                                        "'2026-08-20 09:00:01' or Unix seconds), got '" +
                                            line.substr(0, 60) + "'"));
    pending_ = std::make_pair(*t, line_);
  }
  Scrape s;
  s.time_us = pending_->first;
  s.line = pending_->second;
  pending_.reset();
  while (readLine(line)) {
    ++line_;
    read_ += line.size() + 1;
    // A time line never looks like exposition text: a sample starts with a metric name, a comment with '#'.
    if (const auto t = parseTimeLine(line)) {
      pending_ = std::make_pair(*t, line_);
      break;
    }
    if (s.body.size() + line.size() + 1 > kMaxScrapeBytes)
      throw InputError(formatInputError(
          path_, s.line, "",
          "a scrape larger than " + std::to_string(kMaxScrapeBytes >> 20) + " MiB: not a /metrics answer"));
    s.body += line;
    s.body += '\n';
  }
  ++scrapes_;
  return s;
}

}  // namespace kvscope
