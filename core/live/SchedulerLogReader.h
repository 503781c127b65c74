#pragma once
// Reads one log file's lines in order and folds a `Scheduler hit an exception` with the traceback
// lines that follow it (lines without the `[date]` prefix) into one record, whose `exception` is the
// traceback's last line (e.g. "AssertionError: ..."): that line says why the worker died. vLLM
// writes a multi-line record as lines that each carry the full header, all but the last ending in
// '\r': those are joined per process the same way (a crash's traceback, its last line the
// exception), whatever other processes write between them. Counts what it could not use; nothing is fatal.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/live/LineShapeCounter.h"
#include "core/live/SchedulerLogParser.h"

namespace kvscope {

struct LogLineCounts {
  long lines = 0;
  long known = 0;      // records of a known kind (a folded traceback counts once)
  long unknown = 0;    // prefixed lines of no known format, and stray unprefixed lines
  long malformed = 0;  // a known format with a bad field
  long folded = 0;     // traceback lines folded into a crash
};

class SchedulerLogReader {
 public:
  static constexpr int kMaxTracebackLines = 200;
  static constexpr std::size_t kMaxOpenRecords = 64;  // vLLM processes with a record open at once

  // The records this line completes: none while a traceback is being folded, otherwise the line's
  // own record, preceded by the crash a prefixed line closes.
  std::vector<LogRecord> feed(std::string_view line);
  // The crash still being folded, if any: call when the file has gone quiet, or at its end.
  std::vector<LogRecord> flush();
  // A line longer than the reader keeps (InputFile::kMaxLineBytes): a malformed record for it,
  // after the crash it closes. Its text is never parsed.
  std::vector<LogRecord> overlong(std::size_t max_bytes);
  bool folding() const { return crash_.has_value() || !open_.empty(); }
  const LogLineCounts& counts() const { return counts_; }
  // The unknown lines (prefixed lines of no known format, stray unprefixed ones) by shape.
  const LineShapeCounter& unknownShapes() const { return shapes_; }

 private:
  void count(const LogRecord& r);

  std::optional<LogRecord> crash_;
  struct Open {
    LogRecord record;
    int lines = 0;  // lines joined to it so far
  };
  std::map<std::string, Open> open_;  // vLLM: per process, its record still continuing
  int folded_lines_ = 0;
  LogLineCounts counts_;
  LineShapeCounter shapes_;
};

}  // namespace kvscope
