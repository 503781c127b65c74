#pragma once
// Saved /metrics answers for an import (`kvscope-cli import`): a file of scrapes, each after a line
// that holds only its time, as a loop like
//   while sleep 1; do date '+%F %T.%3N'; curl -s http://10.99.91.47:30001/metrics; done >> d0.prom
// writes. Time lines: "2026-08-20 09:00:01[.fff]", ISO 8601 "2026-08-20T09:00:01[.fff][Z|+hh:mm]"
// (the offset is dropped: SGLang's logs print the host's local time without one, so the wall time is
// what lines up with them) and Unix seconds "1787216401[.fff]" (UTC: lines up with logs of hosts on
// UTC). Read one scrape at a time, so a day of them never sits in memory at once.
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope {

class SavedScrapeReader {
 public:
  static constexpr std::size_t kMaxScrapeBytes = 16u << 20;

  struct Scrape {
    std::int64_t time_us = 0;  // microseconds since 1970, the clock the time line gives
    long line = 0;             // the time line's number
    std::string body;          // the exposition text
  };

  explicit SavedScrapeReader(std::string path);  // throws InputError when it cannot be opened

  // The next scrape, nullopt at the end. Throws InputError (file and line) on text before the first
  // time line or a scrape larger than kMaxScrapeBytes.
  std::optional<Scrape> next();

  static std::optional<std::int64_t> parseTimeLine(std::string_view line);
  const std::string& path() const { return path_; }
  std::uint64_t bytesRead() const { return read_; }
  std::uint64_t size() const { return size_; }
  long scrapes() const { return scrapes_; }

 private:
  bool readLine(std::string& line);  // false at the end; throws on an overlong line or a read error

  std::string path_;
  std::ifstream in_;
  std::uint64_t read_ = 0, size_ = 0;
  long line_ = 0, scrapes_ = 0;
  std::optional<std::pair<std::int64_t, long>> pending_;  // the time line that starts the next scrape
};

}  // namespace kvscope
