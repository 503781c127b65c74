#include "live/LiveSession.h"

#include <chrono>

#include "live/LogEventMapper.h"
#include "live/MooncakeLogMapper.h"
#include "live/SchedulerLogReader.h"

namespace kvscope {

struct LiveSession::LogFile {
  std::string path;
  std::string worker;  // "" for a client log
  SchedulerLogReader reader;
  std::unique_ptr<LogEventMapper> mapper;
  std::unique_ptr<MooncakeLogMapper> mooncake;  // a Mooncake transfer-engine log (the reader is unused)
  std::unique_ptr<MooncakeLogMapper> inline_mooncake;  // Mooncake's glog lines inside a scheduler log
};

LiveSession::LiveSession(ClusterConfig config, std::vector<EventSink*> sinks)
    : LiveSession(std::move(config), std::move(sinks), Options{}) {}

LiveSession::LiveSession(ClusterConfig config, std::vector<EventSink*> sinks, Options options)
    : config_(std::move(config)), options_(options) {
  RunStarted run;
  run.scenario = "live " + config_.name;
  run.profile = "live";
  std::vector<LiveWorkerRef> refs;
  std::int32_t prefills = 0;
  WorkerId serving = 0;
  for (const auto& w : config_.workers) {
    LiveWorkerRef r;
    r.name = w.id;
    r.role = w.role;
    r.kv_capacity = w.kv_capacity_tokens;
    if (w.role == WorkerRole::Prefill) {
      r.prefill = prefills++;
      run.prefill.push_back({w.id, w.role, w.kv_capacity_tokens});
      if (!w.bootstrap_address.empty()) book_.prefill_by_address[w.bootstrap_address] = r.prefill;
    } else {
      r.worker = serving++;
      run.workers.push_back({w.id, w.role, w.kv_capacity_tokens});
      if (w.role == WorkerRole::Decode) book_.decode_workers.push_back(r.worker);
      if (!w.mooncake_address.empty()) book_.decode_by_address[w.mooncake_address] = r.worker;
    }
    refs.push_back(std::move(r));
  }
  // A decode log line names no P; with one P (the lab's 1P+3D) that is the one. A prefill line
  // without an address names its D only when there is a single D.
  for (auto& r : refs) {
    r.peer_prefill = prefills == 1 ? 0 : -1;
    r.peer_decode = book_.decode_workers.size() == 1 ? book_.decode_workers.front() : kNoWorker;
  }
  if (config_.router) {
    // The run's policy and knobs are the router's: the console shows and edits them.
    LiveClusterSpec spec;
    spec.name = run.scenario;
    spec.workers = run.workers;
    spec.prefill = run.prefill;
    spec.block_size = config_.router->block_size;
    spec.policy = config_.router->policy;
    spec.knobs = config_.router->knobs;
    router_spec_ = std::move(spec);
    run.policy = router_spec_->policy;
    KnobRegistry knobs;
    knobs.apply(router_spec_->knobs, "cluster");
    for (const KnobSpec& k : KnobRegistry::specs()) run.knobs.emplace_back(std::string(k.name), knobs.get(k.id));
    run.rho = knobs.get(KnobId::Rho);
  }
  if (router_spec_) sinks.push_back(&router_feed_);
  cluster_ = std::make_unique<LiveCluster>(std::move(run), std::move(sinks));
  if (router_spec_) {
    router_ = std::make_unique<LiveRouter>(*router_spec_, [cluster = cluster_.get()](EventPayload p) { return cluster->post(std::move(p)); });
    router_feed_.router = router_.get();
  }

  // Status indices follow LiveCluster::workerNames(): serving workers, then prefill workers.
  std::vector<ScrapeTarget> targets;
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < config_.workers.size(); ++i) {
    const auto& w = config_.workers[i];
    const LiveWorkerRef& r = refs[i];
    const std::size_t status = r.role == WorkerRole::Prefill ? cluster_->run().workers.size() + static_cast<std::size_t>(r.prefill)
                                                             : static_cast<std::size_t>(r.worker);
    if (!w.metrics_url.empty()) targets.push_back({r, w.metrics_url, status});
    for (const auto& path : w.logs) {
      auto f = std::make_unique<LogFile>();
      f->path = path;
      f->worker = w.id;
      f->mapper = std::make_unique<LogEventMapper>(r, &book_);
      logs_.push_back(std::move(f));
      paths.push_back(path);
    }
    // The worker's Mooncake engine says itself what it thinks of its links (issue 13 section 2).
    for (const auto& path : w.mooncake_logs) {
      auto f = std::make_unique<LogFile>();
      f->path = path;
      f->worker = w.id;
      f->mooncake = std::make_unique<MooncakeLogMapper>(r, &book_);
      logs_.push_back(std::move(f));
      paths.push_back(path);
    }
  }
  for (const auto& path : config_.client_logs) {
    auto f = std::make_unique<LogFile>();
    f->path = path;
    logs_.push_back(std::move(f));
    paths.push_back(path);
  }
  options_.scrape.interval_ms = static_cast<int>(config_.scrape_interval_s * 1000);
  options_.tail.from_start = config_.logs_from_start;
  scraper_ = std::make_unique<MetricsScraper>(std::move(targets), options_.scrape, *cluster_);
  tailer_ = std::make_unique<LogTailer>(
      std::move(paths), options_.tail, [this](std::size_t i, std::string_view l) { onLine(i, l); },
      [this](std::size_t i) { onIdle(i); });
}

LiveSession::~LiveSession() { stop(); }

void LiveSession::apply(LogFile& f, std::vector<LogRecord> records) {
  for (auto& r : records) {
    if (!f.mapper) {  // a client log: only its failed requests mean something
      if (r.kind != LogLineKind::ClientGenerateError) continue;
      RequestDone d;
      d.status = RequestStatus::Failed;
      d.error = "RuntimeError: generate stream ended before producing any token";
      cluster_->post(std::move(d));
      continue;
    }
    if (r.kind == LogLineKind::MooncakeGlog) {  // the engine shares the worker's stderr
      if (!f.inline_mooncake) f.inline_mooncake = std::make_unique<MooncakeLogMapper>(f.mapper->ref(), &book_);
      LogMapping m = f.inline_mooncake->feed(r.message);
      if (!m.events.empty()) cluster_->post(std::move(m.events));
      continue;
    }
    LogMapping m = f.mapper->map(r);
    if (m.gauges) cluster_->setBatchGauges(f.mapper->ref().worker, *m.gauges);
    if (!m.events.empty()) cluster_->post(std::move(m.events));
  }
}

void LiveSession::onLine(std::size_t file, std::string_view line) {
  std::lock_guard lock(logs_mutex_);
  LogFile& f = *logs_.at(file);
  if (f.mooncake) {
    LogMapping m = f.mooncake->feed(line);
    if (!m.events.empty()) cluster_->post(std::move(m.events));
    return;
  }
  apply(f, f.reader.feed(line));
}

void LiveSession::onIdle(std::size_t file) {
  // A traceback's end is only known when the next line arrives, or when the file goes quiet.
  std::lock_guard lock(logs_mutex_);
  LogFile& f = *logs_.at(file);
  apply(f, f.reader.flush());
}

void LiveSession::start() {
  {
    std::lock_guard lock(mutex_);
    if (running_ || stopped_) return;
    running_ = true;
  }
  cluster_->start();
  scraper_->start();
  tailer_->start();
  snapshots_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (running_) {
      wake_.wait_for(lock, std::chrono::duration<double>(config_.scrape_interval_s), [this] { return !running_; });
      if (!running_) break;
      lock.unlock();
      cluster_->snapshot();
      lock.lock();
    }
  });
}

void LiveSession::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    running_ = false;
  }
  wake_.notify_all();
  if (snapshots_.joinable()) snapshots_.join();
  scraper_->stop();
  tailer_->stop();
  {
    std::lock_guard lock(logs_mutex_);
    for (auto& f : logs_) apply(*f, f->reader.flush());
  }
  closeOpenRun();
  cluster_->finish(false);
}

void LiveSession::publishMark(const RunMarked& mark) { cluster_->post(mark); }

std::vector<LiveLogStats> LiveSession::logStats() const {
  const auto tails = tailer_->stats();
  std::lock_guard lock(logs_mutex_);
  std::vector<LiveLogStats> out;
  for (std::size_t i = 0; i < logs_.size(); ++i) {
    const LogFile& f = *logs_[i];
    LiveLogStats s{f.path, f.worker, tails.at(i), f.reader.counts(), f.reader.unknownShapes().top(kLogShapesShown), false};
    if (f.mooncake) {
      const MooncakeLineCounts& c = f.mooncake->counts();
      s.lines = {c.lines, c.known, c.unknown + c.not_glog, 0, 0};
      s.unknown_shapes = f.mooncake->unknownShapes().top(kLogShapesShown);
      s.mooncake = true;
    }
    if (f.inline_mooncake)
      for (const auto& shape : f.inline_mooncake->unknownShapes().top(kLogShapesShown))
        if (s.unknown_shapes.size() < kLogShapesShown) s.unknown_shapes.push_back(shape);
    out.push_back(std::move(s));
  }
  return out;
}

void LiveSession::applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                             std::function<void(KnobRegistry::Result)> done) {
  if (router_) return router_->applyKnobs(std::move(changes), std::move(author), std::move(done));
  KnobRegistry::Result r;
  r.ok = false;
  r.error = "a live cluster's knobs belong to its router: add a `router:` section to the cluster file";
  done(std::move(r));
}

void LiveSession::setPolicy(std::string name, ChangeAuthor author, std::function<void(bool ok)> done) {
  if (router_) return router_->setPolicy(std::move(name), std::move(author), std::move(done));
  done(false);
}

}  // namespace kvscope
