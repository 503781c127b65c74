#pragma once
// A live cluster session: everything `serve --live cluster.yaml` runs. From
// the cluster file it builds the run's picture (serving workers, prefill workers, address book),
// one MetricsScraper loop per worker with a metrics URL, one LogTailer over every log file (each
// line through its file's SchedulerLogReader and its worker's LogEventMapper, or a Mooncake engine
// log's through its worker's MooncakeLogMapper), and a Snapshot every
// scrape interval, all into one LiveCluster stream. As a RunControl it changes knobs and policy
// through its router (the cluster file's `router:` section) and refuses pause, speed and seek.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "backend/live/KvEventFeeds.h"
#include "backend/live/LiveCluster.h"
#include "backend/live/LogTailer.h"
#include "backend/live/MetricsScraper.h"
#include "backend/live/WorkerLogFeed.h"
#include "core/live/ClusterConfig.h"
#include "core/live/LogEventMapper.h"
#include "core/live/SchedulerLogReader.h"
#include "core/run/LiveRouter.h"
#include "core/run/LiveRunControl.h"

namespace kvscope {

// How many unknown-line shapes a file's stats carry (the most frequent first).
inline constexpr std::size_t kLogShapesShown = 3;

class LiveSession : public LiveRunControl {
 public:
  struct Options {
    ScrapeOptions scrape;                          // interval_ms is taken from the cluster file
    TailOptions tail;                              // from_start is taken from the cluster file
    std::function<void(const std::string&)> warn;  // what the KV event feeds have to say (serve logs it)
  };

  LiveSession(ClusterConfig config, std::vector<EventSink*> sinks);
  LiveSession(ClusterConfig config, std::vector<EventSink*> sinks, Options options);
  ~LiveSession() override;  // stop()

  void start();
  void stop();  // stops the adapters, emits RunFinished; idempotent

  LiveCluster& cluster() { return *cluster_; }
  // The router core behind the Router service, when the cluster file has a `router:` section.
  LiveRouter* router() { return router_.get(); }
  const ClusterConfig& config() const { return config_; }
  std::vector<LiveWorkerStatus> statuses() const { return cluster_->statuses(); }
  std::vector<LiveLogStats> logStats() const;
  // Each KV event endpoint's state (the cluster file's kv_events), empty when none is configured.
  std::vector<KvEventFeeds::FeedStatus> kvEventStatus() const { return kv_feeds_->status(); }

  // RunControl
  bool canChangeKnobs() const override { return router_ != nullptr; }  // the knobs are the router's
  void applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                  std::function<void(KnobRegistry::Result)> done) override;
  void setPolicy(std::string name, ChangeAuthor author, Done done) override;
  SimTime simTime() const override { return cluster_->now(); }

 protected:
  void publishMark(const RunMarked& mark) override;

 private:
  void onLine(std::size_t file, std::string_view line);
  void onIdle(std::size_t file);
  void apply(WorkerLogFeed& f, std::vector<LogItem> items);

  ClusterConfig config_;
  Options options_;
  LiveAddressBook book_;
  // Crashes and restarts the logs and scrapes report reach the router's candidate list (through
  // its lock-free notes: the cluster delivers under its own lock, and the router posts under its).
  struct RouterFeed : EventSink {
    LiveRouter* router = nullptr;
    void onEvent(const Event& e) override {
      if (!router) return;
      if (const auto* c = std::get_if<WorkerCrashed>(&e.payload)) router->noteWorkerCrashed(c->worker);
      if (const auto* r = std::get_if<WorkerRestarted>(&e.payload)) router->noteWorkerRestarted(r->worker);
    }
  };
  std::optional<LiveClusterSpec> router_spec_;
  RouterFeed router_feed_;
  std::unique_ptr<LiveCluster> cluster_;
  std::unique_ptr<LiveRouter> router_;  // after cluster_: it posts there, so it goes first
  std::unique_ptr<MetricsScraper> scraper_;
  std::vector<std::unique_ptr<WorkerLogFeed>> logs_;
  std::unique_ptr<LogTailer> tailer_;
  std::unique_ptr<KvEventFeeds> kv_feeds_;
  std::mutex refused_mutex_;           // the feeds' threads share it
  std::set<WorkerId> refused_warned_;  // workers whose KV events the router refused (said once)
  mutable std::mutex logs_mutex_;      // the tailer's thread vs logStats()
  std::thread snapshots_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool running_ = false, stopped_ = false;
};

}  // namespace kvscope
