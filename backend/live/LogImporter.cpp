#include "backend/live/LogImporter.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <queue>

#include "core/io/InputFile.h"
#include "core/live/ExpositionParser.h"
#include "core/live/LiveClusterLayout.h"
#include "core/live/SavedScrapeReader.h"
#include "core/live/VllmMetricsMapper.h"
#include "core/live/WorkerMetricsTracker.h"
#include "core/model/Error.h"

namespace kvscope {

namespace {

constexpr std::int64_t kMicros = 1'000'000;
constexpr long kProgressLines = 4096;
constexpr long kYearScanLines = 2000;
constexpr std::int64_t kMaxQuiet = 3600 * kMicros;

std::int64_t yearOf(std::int64_t clock_s) {
  using namespace std::chrono;
  const year_month_day ymd{floor<days>(sys_seconds{seconds{clock_s}})};
  return static_cast<int>(ymd.year());
}

// A glog time without a year is parsed in 1970: the same month, day and time in `year`. (A line of
// 29 February cannot be told from 1 March in 1970; it lands on 1 March.)
std::int64_t inYear(std::int64_t time_us, int year) {
  using namespace std::chrono;
  const sys_seconds t{seconds{time_us / kMicros}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const sys_days moved{std::chrono::year{year} / ymd.month() / ymd.day()};
  return (moved.time_since_epoch() + (t - day)).count() * kMicros + time_us % kMicros;
}

}  // namespace

struct LogImporter::File {
  struct Timed {
    std::int64_t time_us;
    LogItem item;        // a log record, or
    std::string scrape;  // a saved /metrics answer (scrapes_ files)
  };
  std::unique_ptr<WorkerLogFeed> feed;  // a log file's, or
  std::unique_ptr<SavedScrapeReader> scrapes;
  std::unique_ptr<WorkerMetricsTracker> tracker;
  std::size_t status_index = 0;
  long applied = 0;
  std::ifstream in;
  std::uint64_t size = 0, read = 0;
  long line = 0;
  bool eof = false, done = false;
  std::optional<std::int64_t> last_us;
  std::deque<LogItem> before_first_time;  // records before the file's first timed line
  std::deque<Timed> ready;
};

LogImporter::LogImporter(ClusterConfig config, LogImportOptions options)
    : config_(std::move(config)), options_(std::move(options)) {}
LogImporter::~LogImporter() = default;

int LogImporter::defaultYear() const {
  // The scheduler logs' own year: the first timed line of each, the earliest of them.
  std::optional<std::int64_t> earliest;
  for (const auto& f : files_) {
    if (!f->feed || f->feed->kind() == WorkerLogFeed::Kind::Mooncake) continue;
    std::ifstream in = InputFile::open(f->feed->path());
    std::string line;
    bool too_long = false;
    for (long n = 0; n < kYearScanLines && InputFile::readLine(in, line, &too_long, f->feed->path()); ++n) {
      LogPrefix prefix;
      std::string_view rest;
      if (SchedulerLogParser::parsePrefix(line, prefix, rest) && prefix.has_time) {
        earliest = std::min(earliest.value_or(prefix.clock_s), prefix.clock_s);
        break;
      }
    }
  }
  return earliest ? static_cast<int>(yearOf(*earliest)) : 1970;
}

bool LogImporter::fill(File& f) {
  if (f.scrapes) {
    if (!f.ready.empty() || f.eof) return !f.ready.empty();
    auto s = f.scrapes->next();
    if (!s) {
      f.eof = true;
      return false;
    }
    f.read = f.scrapes->bytesRead();
    std::int64_t t = s->time_us;
    if (f.last_us && t < *f.last_us) {
      ++result_.clock_steps;
      t = *f.last_us;
    }
    f.last_us = t;
    f.ready.push_back({t, LogItem{}, std::move(s->body)});
    return true;
  }
  std::string line;
  while (f.ready.empty() && !f.eof) {
    std::vector<LogItem> items;
    bool too_long = false;
    if (InputFile::readLine(f.in, line, &too_long, f.feed->path())) {
      ++f.line;
      f.read += line.size() + 1;
      items = too_long ? f.feed->readOverlong(InputFile::kMaxLineBytes) : f.feed->read(line);
      if (options_.progress && f.line % kProgressLines == 0) {
        std::uint64_t done = 0, total = 0;
        for (const auto& g : files_) done += std::min(g->read, g->size), total += g->size;
        options_.progress(done, total);
      }
    } else {
      f.eof = true;
      items = f.feed->flush();
    }
    for (LogItem& item : items) {
      if (options_.strict)
        if (const auto* r = std::get_if<LogRecord>(&item); r && r->kind == LogLineKind::Malformed)
          throw InputError(f.feed->path() + ":" + std::to_string(f.line) + ": " + r->problem +
                           " (--strict stops at a malformed line; without it such lines are counted)");
      std::optional<std::int64_t> t = WorkerLogFeed::timeOf(item);
      if (t) {
        if (const auto* m = std::get_if<MooncakeLogRecord>(&item); m && !m->has_year)
          t = inYear(*t, options_.year);
        else if (const auto* r = std::get_if<LogRecord>(&item); r && !r->prefix.has_year)
          t = inYear(*t, options_.year);  // vLLM's MM-DD, as glog's
      }
      if (!t) {
        if (!f.last_us) {
          f.before_first_time.push_back(std::move(item));
          continue;
        }
        t = f.last_us;
      } else if (f.last_us && *t < *f.last_us) {
        ++result_.clock_steps;  // the host's clock stepped back: keep the file's order
        t = f.last_us;
      }
      f.last_us = t;
      for (LogItem& early : f.before_first_time) {
        ++result_.untimed;
        f.ready.push_back({*t, std::move(early), {}});
      }
      f.before_first_time.clear();
      f.ready.push_back({*t, std::move(item), {}});
    }
  }
  if (f.ready.empty() && !f.before_first_time.empty()) {
    // No line of this file carries a time. Alone, its order is its own; among others it cannot be placed.
    if (files_.size() > 1)
      throw InputError(formatInputError(f.feed->path(), 0, "",
                                        "no line carries a time, so its lines cannot be ordered against the other "
                                        "files' (SGLang's default log prefix has the time; import the file alone "
                                        "or with a prefix that has it)"));
    for (LogItem& early : f.before_first_time) f.ready.push_back({options_.from_us.value_or(0), std::move(early), {}});
    f.before_first_time.clear();
  }
  return !f.ready.empty();
}

void LogImporter::applyScrape(File& f, const std::string& body, LiveCluster& cluster) {
  // What MetricsScraper does with an answer, on the log clock (LiveCluster::now() is the scrape's time).
  const Exposition exposition = ExpositionParser().parse(body);
  const EngineMetrics metrics = mapEngineMetrics(f.tracker->ref().engine, exposition);
  if (!metrics.any()) {
    cluster.setHealth(
        f.status_index, WorkerHealth::Degraded,
        std::string("saved scrape holds no ") + (metrics.engine == EngineKind::Vllm ? "vLLM" : "SGLang") + " metrics");
    return;
  }
  ++f.applied;
  const SimTime now = cluster.now();
  MetricsUpdate update = f.tracker->update(metrics, now);
  if (update.gauges) cluster.setGauges(*update.gauges, now);
  if (!update.events.empty()) cluster.post(std::move(update.events));
  const std::string stale = update.staleReason();
  cluster.setHealth(f.status_index, stale.empty() ? WorkerHealth::Ok : WorkerHealth::Degraded, stale);
}

void LogImporter::openFiles(const LiveClusterLayout& layout) {
  const auto open = [&](const std::string& path, WorkerLogFeed::Kind kind, std::optional<LiveWorkerRef> worker) {
    auto f = std::make_unique<File>();
    f->feed = std::make_unique<WorkerLogFeed>(path, kind, std::move(worker), &layout.book);
    f->in = InputFile::open(path);
    std::error_code ec;
    f->size = std::filesystem::file_size(path, ec);
    files_.push_back(std::move(f));
  };
  for (std::size_t i = 0; i < config_.workers.size(); ++i) {
    const LiveWorkerConfig& w = config_.workers[i];
    for (const auto& path : w.logs) open(path, WorkerLogFeed::Kind::Scheduler, layout.refs[i]);
    for (const auto& path : w.mooncake_logs) open(path, WorkerLogFeed::Kind::Mooncake, layout.refs[i]);
    for (const auto& path : w.metrics_scrapes) {
      auto f = std::make_unique<File>();
      f->scrapes = std::make_unique<SavedScrapeReader>(path);
      f->size = f->scrapes->size();
      f->tracker = std::make_unique<WorkerMetricsTracker>(layout.refs[i]);
      f->status_index = layout.statusIndex(layout.refs[i]);
      files_.push_back(std::move(f));
    }
  }
  for (const auto& path : config_.client_logs) open(path, WorkerLogFeed::Kind::Client, std::nullopt);
}

void LogImporter::tallyFiles() {
  for (const auto& f : files_) {
    if (!f->done) continue;  // stopped at the window's end: count the lines left unread as outside
    std::string line;
    bool too_long = false;
    while (InputFile::readLine(f->in, line, &too_long, f->feed->path())) ++result_.outside;
  }
  if (options_.progress) {
    std::uint64_t total = 0;
    for (const auto& f : files_) total += f->size;
    options_.progress(total, total);
  }
  for (const auto& f : files_) {
    if (f->feed)
      result_.files.push_back(f->feed->stats(kShapesShown));
    else
      result_.scrape_files.push_back({f->scrapes->path(), f->tracker->ref().name, f->scrapes->scrapes(), f->applied});
  }
}

void LogImporter::nothingImported() const {
  if (options_.from_us || options_.to_us)
    throw InputError("no line of the logs falls inside the window given by --from/--to");
  // No window given: the files have no timed line at all (empty, or not these logs).
  std::string names;
  for (const auto& f : files_) names += (names.empty() ? "" : ", ") + (f->feed ? f->feed->path() : f->scrapes->path());
  throw InputError("no timed line in " + names + ": nothing to import (an empty file, or not a SGLang/Mooncake log)");
}

LogImportResult LogImporter::run(const std::vector<EventSink*>& sinks) {
  LiveClusterLayout layout = LiveClusterLayout::of(config_);
  openFiles(layout);
  if (files_.empty()) throw InputError("nothing to import: the cluster names no log file");
  if (options_.year == 0) options_.year = defaultYear();

  // The files' next records, earliest first (file order breaks ties, so a run imports the same way twice).
  using Head = std::pair<std::int64_t, std::size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (std::size_t i = 0; i < files_.size(); ++i)
    if (fill(*files_[i])) heads.emplace(files_[i]->ready.front().time_us, i);

  RunStarted run = layout.run;
  run.scenario = "import " + config_.name;
  run.profile = "import";
  std::int64_t t0 = 0, now = 0;
  LiveCluster cluster(std::move(run), sinks, [&now] { return static_cast<SimTime>(now); });
  const std::int64_t interval =
      std::max<std::int64_t>(1000, static_cast<std::int64_t>(options_.snapshot_interval_s * kMicros));
  std::int64_t next_snapshot = 0;
  bool started = false;
  while (!heads.empty()) {
    const auto [t, i] = heads.top();
    heads.pop();
    File& f = *files_[i];
    File::Timed rec = std::move(f.ready.front());
    f.ready.pop_front();
    if (options_.to_us && t > *options_.to_us) {
      // Each file's times only go forward: the rest of this file is past the window too.
      f.done = true;
      continue;
    }
    if (options_.from_us && t < *options_.from_us) {
      ++result_.outside;
    } else {
      if (!started) {
        t0 = options_.from_us.value_or(t);
        result_.first_us = t0;
        next_snapshot = t0 + interval;
        now = 0;
        cluster.start();
        started = true;
      }
      // The gauges the batch lines left are what a scrape at each interval would have seen. A gap of
      // more than kMaxQuiet between two records (a quiet night, a clock set forward by years) gets
      // snapshots for its first kMaxQuiet only, then from the record on.
      const auto snapshotsUntil = [&](std::int64_t until) {
        for (; next_snapshot <= until; next_snapshot += interval) {
          now = next_snapshot - t0;
          cluster.snapshot();
        }
      };
      if (t - next_snapshot > kMaxQuiet) {
        snapshotsUntil(std::max(result_.last_us, t0) + kMaxQuiet);
        next_snapshot = t - (t - next_snapshot) % interval;
      }
      snapshotsUntil(t);
      now = t - t0;
      result_.last_us = t;
      if (f.scrapes)
        applyScrape(f, rec.scrape, cluster);
      else
        f.feed->apply(rec.item, cluster);
    }
    if (!f.ready.empty() || fill(f)) heads.emplace(f.ready.front().time_us, i);
  }
  tallyFiles();
  if (!started) nothingImported();
  std::vector<std::string> notes;
  for (const auto& s : result_.files)
    for (auto& n : WorkerLogFeed::notes(s)) notes.push_back(std::move(n));
  cluster.finish(true, std::move(notes));
  result_.events = cluster.events();
  return result_;
}

}  // namespace kvscope
