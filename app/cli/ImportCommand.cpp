// `kvscope-cli import` (a past run's logs become a recording) and `kvscope-cli logs` (what each
// line of a log maps to, for checking a new upstream format).
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "backend/live/LogImporter.h"
#include "backend/recording/EventRecorder.h"
#include "core/events/EventJson.h"
#include "core/io/AtomicFile.h"
#include "core/io/InputFile.h"
#include "core/io/TemporaryFiles.h"
#include "core/live/ClusterConfigLoader.h"
#include "core/live/LiveClusterLayout.h"
#include "core/live/SavedScrapeReader.h"
#include "core/model/Error.h"

namespace kvscope::cli {

namespace {

// "2026-08-20 09:14:02", "2026-08-20T09:14:02.250" (or Unix seconds): the logs' own clock, read as a
// saved scrape's time line is.
std::int64_t parseLogTime(const std::string& text, const char* option) {
  const auto t = SavedScrapeReader::parseTimeLine(text);
  if (!t) throw UsageError(std::string(option) + " '" + text + "': expected a log time like '2026-08-20 09:14:02'");
  return *t;
}

std::string logTimeText(std::int64_t us) {
  using namespace std::chrono;
  const sys_seconds t{seconds{us / 1'000'000}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02lld:%02lld:%02lld.%03lld", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<long long>(hms.hours().count()), static_cast<long long>(hms.minutes().count()),
                static_cast<long long>(hms.seconds().count()), static_cast<long long>(us % 1'000'000 / 1000));
  return buf;
}

// The workers `--log NAME=PATH` names, added to (or making) the cluster: a name starting with P is
// a prefill worker, any other a decode worker.
LiveWorkerConfig& workerNamed(ClusterConfig& config, const std::string& name) {
  for (auto& w : config.workers)
    if (w.id == name) return w;
  LiveWorkerConfig w;
  w.id = name;
  w.role = !name.empty() && (name[0] == 'P' || name[0] == 'p') ? WorkerRole::Prefill : WorkerRole::Decode;
  config.workers.push_back(std::move(w));
  return config.workers.back();
}

void addNamedFiles(ClusterConfig& config, const std::vector<std::string>& specs,
                   std::vector<std::string> LiveWorkerConfig::*files, const char* option) {
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError(std::string(option) + " '" + spec + "': expected WORKER=PATH (e.g. D0=decode0.log)");
    LiveWorkerConfig& w = workerNamed(config, spec.substr(0, eq));
    (w.*files).push_back(spec.substr(eq + 1));
  }
}

void describeRecord(const LogRecord& r, nlohmann::json& j) {
  j["kind"] = toString(r.kind);
  if (r.kind == LogLineKind::Unknown || r.kind == LogLineKind::Continuation)
    j["shape"] = LineShapeCounter::shapeOf(r.message);
  if (r.kind == LogLineKind::Malformed) j["problem"] = r.problem;
  if (!r.exception.empty()) j["exception"] = r.exception;
  if (!r.rid.empty()) j["rid"] = r.rid;
  if (!r.remote.empty()) j["remote"] = r.remote;
  if (!r.prefix.process.empty()) j["process"] = r.prefix.process;  // vLLM's "(NAME pid=N) "
  if (r.kind == LogLineKind::EngineStats && r.prefix.dp >= 0) j["engine"] = r.prefix.dp;
  if (r.engines_aggregated > 0) j["engines_aggregated"] = r.engines_aggregated;
}

void describeRecord(const MooncakeLogRecord& r, nlohmann::json& j) {
  j["kind"] = std::string("mooncake_") + toString(r.kind);
  if (r.kind == MooncakeLineKind::NotGlog) return;
  j["severity"] = std::string(1, r.severity);
  j["source"] = r.file + ":" + std::to_string(r.line);
  if (r.kind == MooncakeLineKind::Unknown) j["shape"] = LineShapeCounter::shapeOf(r.message);
  if (!r.peer.empty()) j["peer"] = r.peer;
  if (!r.local_nic.empty()) j["local_nic"] = r.local_nic;
}

// The fields a batch line carried (upstream's names, without the '#').
nlohmann::json batchGaugesJson(const BatchGauges& b) {
  nlohmann::json j = nlohmann::json::object();
  const auto count = [&](const char* name, std::int64_t v) {
    if (v >= 0) j[name] = v;
  };
  const auto ratio = [&](const char* name, double v) {
    if (v >= 0) j[name] = v;
  };
  count("running-req", b.running_req);
  count("queue-req", b.queue_req);
  count("token", b.tokens);
  count("new-seq", b.new_seq);
  count("new-token", b.new_token);
  count("cached-token", b.cached_token);
  count("prealloc-req", b.prealloc_req);
  count("transfer-req", b.transfer_req);
  count("retracted-req", b.retracted_req);
  count("inflight-req", b.inflight_req);
  count("bootstrap-req", b.bootstrap_req);
  count("pending-token", b.pending_token);
  count("mixed-running-req", b.mixed_running_req);
  count("iteration", b.iteration);
  count("full token", b.full_tokens);
  count("swa token", b.swa_tokens);
  count("mamba num", b.mamba_num);
  ratio("full token usage", b.full_usage);
  ratio("swa token usage", b.swa_usage);
  ratio("mamba usage", b.mamba_usage);
  ratio("token usage", b.token_usage);
  ratio("pre-allocated usage", b.preallocated_usage);
  ratio("gen throughput (token/s)", b.gen_throughput);
  ratio("input throughput (token/s)", b.input_throughput);
  ratio("cache hit rate", b.cache_hit_rate);
  ratio("accept len", b.accept_len);
  ratio("external prefix cache hit rate", b.external_hit_rate);
  count("preemptions", b.preemptions);
  count("GPU KV cache size (tokens)", b.capacity_tokens);
  if (b.cuda_graph >= 0) j["cuda graph"] = b.cuda_graph == 1;
  return j;
}

struct FileArgs {
  std::string cluster;
  std::vector<std::string> logs, mooncake_logs, client_logs, scrapes;
};

void addFileOptions(CLI::App* sub, FileArgs& a) {
  sub->add_option("--cluster", a.cluster, "Cluster file (YAML): its workers, addresses and log files");
  sub->add_option("--log", a.logs,
                  "A worker's SGLang scheduler log, WORKER=PATH (P... prefill, D... decode); repeatable");
  sub->add_option("--mooncake-log", a.mooncake_logs,
                  "A worker's Mooncake transfer-engine (glog) log, WORKER=PATH; repeatable");
  sub->add_option("--client-log", a.client_logs, "The benchmark client's log (its failed requests); repeatable");
}

void addScrapeOption(CLI::App* sub, FileArgs& a) {
  sub->add_option(
      "--metrics", a.scrapes,
      "A worker's saved /metrics scrapes, WORKER=PATH: each answer after a line with its time "
      "('2026-08-20 09:00:01' or Unix seconds, e.g. from `date '+%F %T'; curl .../metrics` in a loop); repeatable");
}

ClusterConfig clusterOf(const FileArgs& a) {
  ClusterConfig config;
  if (!a.cluster.empty())
    config = ClusterConfigLoader::load(a.cluster);
  else
    config.name = "logs";
  addNamedFiles(config, a.logs, &LiveWorkerConfig::logs, "--log");
  addNamedFiles(config, a.mooncake_logs, &LiveWorkerConfig::mooncake_logs, "--mooncake-log");
  addNamedFiles(config, a.scrapes, &LiveWorkerConfig::metrics_scrapes, "--metrics");
  for (const auto& p : a.client_logs) config.client_logs.push_back(p);
  return config;
}

void printFileStats(const std::vector<LiveLogStats>& files) {
  for (const auto& f : files) {
    std::fprintf(stderr, "  %-4s %s: %ld lines, %ld known, %ld unknown, %ld malformed, %ld traceback\n",
                 f.worker.empty() ? "-" : f.worker.c_str(), f.path.c_str(), f.lines.lines, f.lines.known,
                 f.lines.unknown, f.lines.malformed, f.lines.folded);
    for (const auto& shape : f.unknown_shapes)
      std::fprintf(stderr, "         %s\n", LineShapeCounter::describe(shape).c_str());
  }
}

// "import:  42.0% (12.3 of 29.3 MB)" on one line, four times a second at most.
std::function<void(std::uint64_t, std::uint64_t)> progressPrinter() {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last](std::uint64_t done, std::uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - *last < std::chrono::milliseconds(250)) return;
    *last = now;
    std::fprintf(stderr, "\rimport: %5.1f%% (%.1f of %.1f MB)",
                 total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0,
                 static_cast<double>(done) / 1e6, static_cast<double>(total) / 1e6);
    if (done >= total) std::fputc('\n', stderr);
  };
}

// The recording, written whole under a temporary name and moved into place, or not at all.
LogImportResult importInto(const std::string& out, ClusterConfig config, const LogImportOptions& options) {
  std::string error;
  const auto target = AtomicFile::target(out, &error);
  if (!target) throw InputError(error);
  const std::string partial = AtomicFile::partialPath(*target);
  const TemporaryFiles::Guard removed_on_interrupt(partial);
  // A temporary already there was left by an import killed outright (SIGKILL, a power cut): the
  // recorder takes it over (locked, truncated) or, when another import still writes it, refuses.
  const bool stale = std::filesystem::exists(partial);
  LogImportResult result;
  {
    EventRecorder recorder(partial);
    if (!recorder.error().empty()) throw InputError(out + ": not written: " + recorder.error());
    if (stale) std::fprintf(stderr, "kvscope-cli: replacing %s, left by an import that was killed\n", partial.c_str());
    try {
      result = LogImporter(std::move(config), options).run({&recorder});
    } catch (...) {
      recorder.close(nullptr);
      std::filesystem::remove(partial);
      throw;
    }
    if (!recorder.close(&error)) {
      std::filesystem::remove(partial);
      throw InputError(error);
    }
  }
  if (!AtomicFile::moveIntoPlace(partial, *target, &error)) throw InputError(error);
  return result;
}

// What was read and written, on stderr (stdout stays free for a pipe).
void printImportSummary(const LogImportResult& result, const std::string& out) {
  std::fprintf(stderr, "kvscope-cli: read %zu files:\n", result.files.size() + result.scrape_files.size());
  printFileStats(result.files);
  for (const auto& f : result.scrape_files)
    std::fprintf(stderr, "  %-4s %s: %ld scrapes, %ld with SGLang metrics\n", f.worker.c_str(), f.path.c_str(),
                 f.scrapes, f.applied);
  std::fprintf(stderr, "kvscope-cli: wrote %llu events, log time %s to %s (%.1f s), to %s\n",
               static_cast<unsigned long long>(result.events), logTimeText(result.first_us).c_str(),
               logTimeText(result.last_us).c_str(), static_cast<double>(result.last_us - result.first_us) / 1e6,
               out.c_str());
  if (result.outside) std::fprintf(stderr, "kvscope-cli: %ld records outside --from/--to left out\n", result.outside);
  if (result.clock_steps)
    std::fprintf(
        stderr,
        "kvscope-cli: warning: %ld lines were earlier than the line before them in their file (kept in file order)\n",
        result.clock_steps);
  std::fprintf(stderr, "kvscope-cli: next: kvscope-cli report %s\n", out.c_str());
}

}  // namespace

Command addImport(CLI::App& app) {
  auto* sub = app.add_subcommand("import", "Turn a past run's scheduler and Mooncake logs into a recording (.kvrec)");
  sub->footer(
      "Reads every log from its start, orders the lines of all files by their time and writes what a live\n"
      "session would have recorded: per-D load and KV use from batch lines, crashes, corrections, link\n"
      "failures, failed requests, and a Snapshot every --snapshot-interval. Then: `kvscope-cli report\n"
      "run.kvrec`, `kvscope --replay run.kvrec`.\n"
      "  kvscope-cli import --cluster cluster.yaml --from '2026-08-20 09:00:00' --to '2026-08-20 10:00:00' -o "
      "run.kvrec\n"
      "  kvscope-cli import --log P0=prefill.log --log D0=d0.log --log D1=d1.log --mooncake-log P0=te.log -o "
      "run.kvrec");
  auto files = std::make_shared<FileArgs>();
  auto out = std::make_shared<std::string>();
  auto from = std::make_shared<std::string>(), to = std::make_shared<std::string>();
  auto interval = std::make_shared<double>(0);
  auto strict = std::make_shared<bool>(false);
  auto year = std::make_shared<int>(0);
  addFileOptions(sub, *files);
  addScrapeOption(sub, *files);
  sub->add_option("-o,--output", *out, "The recording to write (.kvrec; written whole or not at all)")->required();
  sub->add_option("--from", *from,
                  "Start of the window, log time 'YYYY-MM-DD HH:MM:SS[.fff]' (default: the first line)");
  sub->add_option("--to", *to, "End of the window, log time (default: the last line)");
  sub->add_option("--snapshot-interval", *interval,
                  "Seconds of log time between Snapshots (default: the cluster file's scrape_interval_s, 1)")
      ->check(CLI::Range(0.01, 3600.0));
  sub->add_option("--year", *year,
                  "Year of Mooncake glog lines printed without one (default: the scheduler logs' year)")
      ->check(CLI::Range(1970, 9999));
  sub->add_flag("--strict", *strict, "Stop at the first malformed line (default: count it and go on)");
  return [files, out, from, to, interval, strict, year] {
    ClusterConfig config = clusterOf(*files);
    LogImportOptions options;
    if (!from->empty()) options.from_us = parseLogTime(*from, "--from");
    if (!to->empty()) options.to_us = parseLogTime(*to, "--to");
    if (options.from_us && options.to_us && *options.to_us <= *options.from_us)
      throw UsageError("--to must be after --from");
    options.snapshot_interval_s = *interval > 0 ? *interval : config.scrape_interval_s;
    options.strict = *strict;
    options.year = *year;
    if (isatty(STDERR_FILENO)) options.progress = progressPrinter();  // a script's log gets the summary alone
    const LogImportResult result = importInto(*out, std::move(config), options);
    printImportSummary(result, *out);
    return 0;
  };
}

Command addLogs(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "logs", "Print what each line of SGLang, vLLM or Mooncake logs maps to (one JSON object per record)");
  sub->footer(
      "Every record a line completes: its kind (unknown lines with their shape, malformed ones with the\n"
      "field), the events it maps to and a batch line's gauges. A traceback is one crash record.\n"
      "  kvscope-cli logs decode0.log\n"
      "  kvscope-cli logs --worker P0 --cluster cluster.yaml prefill.log mooncake.log");
  auto paths = std::make_shared<std::vector<std::string>>();
  auto worker = std::make_shared<std::string>("D0");
  auto cluster = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("jsonl");
  sub->add_option("files", *paths, "Log files (scheduler logs, Mooncake glog logs, or both in one stream)")->required();
  sub->add_option("--worker", *worker, "Whose logs they are (P... prefill, D... decode; a cluster file's worker name)")
      ->capture_default_str();
  sub->add_option("--cluster", *cluster, "Cluster file: the addresses that name P/D pairs in link events");
  sub->add_option("--format", *format, "Output format")->check(CLI::IsMember({"jsonl"}))->capture_default_str();
  // `format` is captured for its storage: CLI11 writes the parsed value into it after this returns.
  return [paths, worker, cluster, format] {
    ClusterConfig config;
    if (!cluster->empty()) config = ClusterConfigLoader::load(*cluster);
    workerNamed(config, *worker);
    const LiveClusterLayout layout = LiveClusterLayout::of(config);
    std::optional<LiveWorkerRef> ref;
    for (std::size_t i = 0; i < config.workers.size(); ++i)
      if (config.workers[i].id == *worker) ref = layout.refs[i];
    for (const auto& path : *paths) {
      std::ifstream in = InputFile::open(path);
      WorkerLogFeed feed(path, WorkerLogFeed::Kind::Scheduler, ref, &layout.book);
      long n = 0, started = 0;
      const auto print = [&](const LogItem& item, long line) {
        nlohmann::json j{{"file", path}, {"line", line}};
        const auto t = WorkerLogFeed::timeOf(item);
        if (t) j["time"] = logTimeText(*t);
        std::visit([&](const auto& r) { describeRecord(r, j); }, item);
        const LogMapping m = feed.map(item);
        nlohmann::json events = nlohmann::json::array();
        for (const auto& p : m.events) {
          nlohmann::json e = eventToJson(Event{0, 0, p});
          e.erase("seq");
          e.erase("t_us");
          events.push_back(std::move(e));
        }
        if (!events.empty()) j["events"] = std::move(events);
        if (m.gauges) j["gauges"] = batchGaugesJson(*m.gauges);
        std::printf("%s\n", j.dump().c_str());
      };
      std::string text;
      bool too_long = false;
      while (InputFile::readLine(in, text, &too_long, path)) {
        ++n;
        const bool was_folding = feed.folding();
        for (const LogItem& item : too_long ? feed.readOverlong(InputFile::kMaxLineBytes) : feed.read(text))
          print(item, was_folding && std::holds_alternative<LogRecord>(item) &&
                              std::get<LogRecord>(item).kind == LogLineKind::SchedulerException
                          ? started
                          : n);
        if (!was_folding && feed.folding()) started = n;
      }
      for (const LogItem& item : feed.flush()) print(item, started);
    }
    return 0;
  };
}

}  // namespace kvscope::cli
