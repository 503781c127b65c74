#pragma once
// One log file's lines on their way into a LiveCluster, for a live session that tails it and for
// an import that reads it from the start. A scheduler log goes through its SchedulerLogReader
// (tracebacks folded into the crash) and its worker's LogEventMapper, with the Mooncake glog lines
// the engine writes to the same stream handed to a MooncakeLogMapper; a Mooncake transfer-engine
// log goes to its worker's MooncakeLogMapper; a benchmark client's log says only which requests
// failed. Reading (parse, fold, count) and applying (map, post) are two steps so that an import can
// order the records of many files by their time in between.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "backend/live/LiveCluster.h"
#include "backend/live/LogTailer.h"
#include "core/live/LineShapeCounter.h"
#include "core/live/LogEventMapper.h"
#include "core/live/MooncakeLogMapper.h"
#include "core/live/SchedulerLogReader.h"

namespace kvscope {

// What a file's lines say, with the counts a session's status and an import's summary show.
struct LiveLogStats {
  std::string path;
  std::string worker;                                   // "" for a client log
  TailFileStats tail;                                   // a tailed file's reading state (empty for an import)
  LogLineCounts lines;                                  // a Mooncake log: unknown counts its non-glog lines too
  std::vector<LineShapeCounter::Shape> unknown_shapes;  // "12 lines like ..." (LineShapeCounter::describe)
  bool mooncake = false;  // a Mooncake transfer-engine log (the cluster file's mooncake_logs)
};

// One record of a file: a scheduler (or client) log record, or a Mooncake glog record.
using LogItem = std::variant<LogRecord, MooncakeLogRecord>;

class WorkerLogFeed {
 public:
  enum class Kind { Scheduler, Mooncake, Client };

  // `worker` is empty for a client log; `book` outlives the feed.
  WorkerLogFeed(std::string path, Kind kind, std::optional<LiveWorkerRef> worker, const LiveAddressBook* book);

  // The records this line completes (none while a traceback is being folded).
  std::vector<LogItem> read(std::string_view line);
  // A line too long to read (InputFile::readLine's `too_long`): counted as malformed, never parsed.
  std::vector<LogItem> readOverlong(std::size_t max_bytes);
  // The crash still being folded, at the file's end or when it has gone quiet.
  std::vector<LogItem> flush();
  // What one record means: events, and a batch line's gauges for the worker's next Snapshot.
  LogMapping map(const LogItem& item);
  // map() and post what it means to the cluster.
  void apply(const LogItem& item, LiveCluster& cluster);
  // A traceback is being folded into a crash (the record comes with a later line or flush()).
  bool folding() const { return reader_.folding(); }
  const LiveWorkerRef* worker() const { return worker_ ? &*worker_ : nullptr; }

  // The log clock of a record in microseconds since 1970 (as written, zone unknown); nullopt when
  // the line carries no time. A glog line without a year is placed in 1970 (see LogImporter).
  static std::optional<std::int64_t> timeOf(const LogItem& item);

  const std::string& path() const { return path_; }
  Kind kind() const { return kind_; }
  LiveLogStats stats(std::size_t shapes) const;
  // What a report says of this file's lines it could not use: "d0.log: 3 of 400 lines malformed",
  // "d0.log: 12 lines like \"...\"" (file name only; empty when every line was understood).
  static std::vector<std::string> notes(const LiveLogStats& s);

 private:
  std::string path_;
  Kind kind_;
  std::optional<LiveWorkerRef> worker_;
  const LiveAddressBook* book_;
  SchedulerLogReader reader_;
  std::unique_ptr<LogEventMapper> mapper_;
  std::unique_ptr<MooncakeLogMapper> mooncake_;  // the Mooncake log's, or the inline glog lines'
};

}  // namespace kvscope
