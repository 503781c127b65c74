#pragma once
// A past run's logs as a recording (`kvscope-cli import`): the workers' scheduler logs, their
// Mooncake transfer-engine logs, the benchmark client's log and saved /metrics scrapes
// (SavedScrapeReader), read from the start, merged across files by the time each line carries, mapped by the same
// WorkerLogFeed a live session uses, and posted to a LiveCluster that runs on the logs' clock instead of the wall
// clock. A scrape goes through the WorkerMetricsTracker a live scraper uses (counters become events, gauges the
// worker's). The batch lines' gauges become a Snapshot every `snapshot_interval_s` of log time. Sinks (a recorder, a
// diagnosis) see the stream a live session would have produced had it watched the run.
//
// Time: SGLang's prefix carries the local date and time (`.mmm` with SGLANG_LOG_MS); glog's carries
// month and day and, with --log_year_in_prefix, the year. A glog line without a year takes the
// scheduler logs' year (or `year`). Both are the hosts' local clocks: the files are assumed to come
// from hosts on the same zone and synchronised clocks. A line without a time (a traceback, a
// prefix without asctime) takes the time of the line before it in its file; a file's lines stay in
// file order even when its clock steps back.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/live/WorkerLogFeed.h"
#include "core/events/Event.h"
#include "core/live/ClusterConfig.h"

namespace kvscope {

struct LiveClusterLayout;

struct LogImportOptions {
  std::optional<std::int64_t> from_us, to_us;  // the window, log clock in microseconds since 1970
  double snapshot_interval_s = 1.0;
  bool strict = false;  // the first malformed line (a known format with a bad field) stops the import
  int year = 0;         // for glog lines without a year; 0 = the scheduler logs' own year
  // Called every few thousand lines and at the end: bytes read of all files, and their total.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

struct LogImportResult {
  std::vector<LiveLogStats> files;
  struct Scrapes {
    std::string path, worker;
    long scrapes = 0, applied = 0;  // applied: held SGLang metrics
  };
  std::vector<Scrapes> scrape_files;
  std::int64_t first_us = -1, last_us = -1;  // the log time the recording covers
  std::uint64_t events = 0;
  long outside = 0;      // records outside the window
  long untimed = 0;      // records before their file's first timed line (placed at its time)
  long clock_steps = 0;  // records whose time went back within their file
};

class LogImporter {
 public:
  static constexpr std::size_t kShapesShown = 3;

  LogImporter(ClusterConfig config, LogImportOptions options);
  ~LogImporter();

  // Reads every file and posts the run to `sinks`. Throws InputError: a file that cannot be read,
  // a set of several files one of which carries no time at all, a malformed line under `strict`,
  // a window that holds no line.
  LogImportResult run(const std::vector<EventSink*>& sinks);

 private:
  struct File;
  bool fill(File& f);  // reads until `f` has a timed record ready; false at its end
  void applyScrape(File& f, const std::string& body, LiveCluster& cluster);
  int defaultYear() const;
  // run()'s phases: the files the cluster names, opened in its order; then, after the merge, the
  // lines left past the window, the last progress and each file's figures; and the error when no
  // line was imported at all.
  void openFiles(const LiveClusterLayout& layout);
  void tallyFiles();
  [[noreturn]] void nothingImported() const;

  ClusterConfig config_;
  LogImportOptions options_;
  std::vector<std::unique_ptr<File>> files_;
  LogImportResult result_;
};

}  // namespace kvscope
