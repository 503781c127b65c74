#include "backend/live/LiveSession.h"

#include <chrono>

#include "core/live/LiveClusterLayout.h"

namespace kvscope {

LiveSession::LiveSession(ClusterConfig config, std::vector<EventSink*> sinks)
    : LiveSession(std::move(config), std::move(sinks), Options{}) {}

LiveSession::LiveSession(ClusterConfig config, std::vector<EventSink*> sinks, Options options)
    : config_(std::move(config)), options_(options) {
  LiveClusterLayout layout = LiveClusterLayout::of(config_);
  book_ = std::move(layout.book);
  RunStarted run = layout.run;  // a copy: statusIndex() below reads the layout's
  const std::vector<LiveWorkerRef>& refs = layout.refs;
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
    router_ = std::make_unique<LiveRouter>(
        *router_spec_, [cluster = cluster_.get()](EventPayload p) { return cluster->post(std::move(p)); },
        [cluster = cluster_.get()] { cluster->flush(); });
    router_feed_.router = router_.get();
  }

  // Status indices follow LiveCluster::workerNames(): serving workers, then prefill workers.
  std::vector<ScrapeTarget> targets;
  std::vector<std::string> paths;
  const auto follow = [&](const std::string& path, WorkerLogFeed::Kind kind, std::optional<LiveWorkerRef> worker) {
    logs_.push_back(std::make_unique<WorkerLogFeed>(path, kind, std::move(worker), &book_));
    paths.push_back(path);
  };
  for (std::size_t i = 0; i < config_.workers.size(); ++i) {
    const auto& w = config_.workers[i];
    const LiveWorkerRef& r = refs[i];
    if (!w.metrics_url.empty()) targets.push_back({r, w.metrics_url, layout.statusIndex(r)});
    for (const auto& path : w.logs) follow(path, WorkerLogFeed::Kind::Scheduler, r);
    // The worker's Mooncake engine says itself what it thinks of its links.
    for (const auto& path : w.mooncake_logs) follow(path, WorkerLogFeed::Kind::Mooncake, r);
  }
  for (const auto& path : config_.client_logs) follow(path, WorkerLogFeed::Kind::Client, std::nullopt);
  options_.scrape.interval_ms = static_cast<int>(config_.scrape_interval_s * 1000);
  options_.tail.from_start = config_.logs_from_start;
  scraper_ = std::make_unique<MetricsScraper>(std::move(targets), options_.scrape, *cluster_);
  std::vector<std::size_t> status_index;
  for (const auto& r : refs) status_index.push_back(layout.statusIndex(r));
  std::optional<KvEventFeeds::RouterLink> link;
  if (router_) {
    // The engines' blocks, in the router's hashes, as if the lab's router had reported them; a
    // refusal (a pool over its capacity) is said once per worker, never silently dropped.
    link = KvEventFeeds::RouterLink{
        router_spec_->block_size, [this](WorkerId w, const KvRouterAlignment::Update& u) {
          std::string error;
          if (!u.removed.empty()) router_->blocksRemoved(w, u.removed, &error);
          for (std::size_t at = 0; at < u.stored.size(); at += LiveRouter::kMaxBlockHashes) {
            const std::size_t n = std::min<std::size_t>(LiveRouter::kMaxBlockHashes, u.stored.size() - at);
            if (router_->blocksStored(w, 0, std::span(u.stored).subspan(at, n), &error)) continue;
            std::lock_guard lock(refused_mutex_);
            if (options_.warn && refused_warned_.insert(w).second)
              options_.warn("KV events of worker " + std::to_string(w) + " not given to the router: " + error);
          }
        }};
  }
  kv_feeds_ = std::make_unique<KvEventFeeds>(config_, refs, status_index, *cluster_, options_.warn, std::move(link));
  tailer_ = std::make_unique<LogTailer>(
      std::move(paths), options_.tail, [this](std::size_t i, std::string_view l) { onLine(i, l); },
      [this](std::size_t i) { onIdle(i); });
}

LiveSession::~LiveSession() { stop(); }

void LiveSession::apply(WorkerLogFeed& f, std::vector<LogItem> items) {
  for (const LogItem& item : items) f.apply(item, *cluster_);
}

void LiveSession::onLine(std::size_t file, std::string_view line) {
  std::lock_guard lock(logs_mutex_);
  WorkerLogFeed& f = *logs_.at(file);
  apply(f, f.read(line));
}

void LiveSession::onIdle(std::size_t file) {
  // A traceback's end is only known when the next line arrives, or when the file goes quiet.
  std::lock_guard lock(logs_mutex_);
  WorkerLogFeed& f = *logs_.at(file);
  apply(f, f.flush());
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
  kv_feeds_->start();
  snapshots_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (running_) {
      wake_.wait_for(lock, std::chrono::duration<double>(config_.scrape_interval_s), [this] { return !running_; });
      if (!running_) break;
      lock.unlock();
      if (router_) {
        // The router forgets unreported requests even when none arrive; what it forgot is shown.
        router_->publishSnapshot();
        const LiveRouter::UnreportedCounts counts = router_->unreportedCounts();
        for (std::size_t w = 0; w < counts.expired.size(); ++w)
          cluster_->setUnreported(static_cast<WorkerId>(w), counts.expired[w], counts.awaiting[w]);
      }
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
  kv_feeds_->stop();
  {
    std::lock_guard lock(logs_mutex_);
    for (auto& f : logs_) apply(*f, f->flush());
  }
  closeOpenRun();
  std::vector<std::string> notes;
  {
    std::lock_guard lock(logs_mutex_);
    for (const auto& f : logs_)
      for (auto& n : WorkerLogFeed::notes(f->stats(kLogShapesShown))) notes.push_back(std::move(n));
  }
  cluster_->finish(false, std::move(notes));
}

void LiveSession::publishMark(const RunMarked& mark) { cluster_->post(mark); }

std::vector<LiveLogStats> LiveSession::logStats() const {
  const auto tails = tailer_->stats();
  std::lock_guard lock(logs_mutex_);
  std::vector<LiveLogStats> out;
  for (std::size_t i = 0; i < logs_.size(); ++i) {
    LiveLogStats s = logs_[i]->stats(kLogShapesShown);
    s.tail = tails.at(i);
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

void LiveSession::setPolicy(std::string name, ChangeAuthor author, Done done) {
  if (router_) return router_->setPolicy(std::move(name), std::move(author), std::move(done));
  done({false, "a live cluster's policy belongs to its router: add a `router:` section to the cluster file", {}});
}

}  // namespace kvscope
