#pragma once
// A live cluster's KV event feeds (the cluster file's per-worker `kv_events`): one
// KvEventSubscriber per endpoint (per data-parallel rank), all folding into one KvBlockState, whose
// evictions join the cluster's stream. A worker watched by its events alone (no /metrics) takes its
// KV use from the blocks it holds, and its health from its feeds; a gap replay could not fill is
// said (warn) and kept in status(), never skipped silently. Serving workers only: a prefill worker's cache is
// not what the router routes on. With a router (the cluster file's `router:`), the blocks whose
// tokens the engine sent are also given to it in its own hashes (KvRouterAlignment), so
// `cache_view = exact` routes on what the engines hold.
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/live/KvEventSubscriber.h"
#include "core/live/ClusterConfig.h"
#include "core/live/KvBlockState.h"
#include "core/live/KvRouterAlignment.h"
#include "core/live/WorkerMetricsTracker.h"

namespace kvscope {

class LiveCluster;

class KvEventFeeds {
 public:
  // `refs` and `status_index` as LiveClusterLayout gives them, one per config worker.
  // `warn` (any thread) gets a line for a lost gap, an unreachable endpoint, a batch that is not one.
  using Warn = std::function<void(const std::string&)>;
  // What the router is told: blocks the engine removed (their router hashes), then blocks it stored.
  using RouterUpdate = std::function<void(WorkerId, const KvRouterAlignment::Update&)>;
  struct RouterLink {
    int block_size = 0;  // the router's tokens per block hash
    RouterUpdate update;
  };
  KvEventFeeds(const ClusterConfig& config, const std::vector<LiveWorkerRef>& refs,
               const std::vector<std::size_t>& status_index, LiveCluster& cluster, Warn warn = {},
               std::optional<RouterLink> router = std::nullopt);
  ~KvEventFeeds();  // stop()
  void start();
  void stop();

  struct FeedStatus {
    std::string worker, endpoint;
    bool reachable = false;
    std::string why;  // the last unreachable reason or gap, "" when all is well
    KvEventSubscriber::Counts counts;
    std::size_t blocks = 0;                              // the worker's blocks held now (all its feeds)
    std::optional<KvRouterAlignment::Counts> alignment;  // with a router: what matched it and what did not
  };
  std::vector<FeedStatus> status() const;
  bool empty() const { return feeds_.empty(); }

 private:
  struct Feed {
    std::string worker_name;
    WorkerId worker = kNoWorker;
    std::string endpoint;
    std::unique_ptr<KvEventSubscriber> subscriber;
    bool reachable = false;
    std::string why;
    bool said_unmatched = false;  // the blocks the router cannot match were warned about
  };
  // What each feed's subscriber calls (its own thread): the listener, and its two larger reactions.
  // `events_alone`: the worker has no /metrics, so its feeds speak for its KV use and health.
  KvEventSubscriber::Listener listenerFor(Feed* f, bool events_alone, std::size_t index);
  void onBatch(Feed* f, const KvEventBatch& batch, bool events_alone);
  void onRestarted(Feed* f, bool events_alone);

  LiveCluster& cluster_;
  Warn warn_;
  mutable std::mutex mutex_;  // state_ and the feeds' reachability
  std::unique_ptr<KvBlockState> state_;
  std::optional<RouterLink> router_;
  std::unique_ptr<KvRouterAlignment> alignment_;
  std::vector<std::unique_ptr<Feed>> feeds_;
};

}  // namespace kvscope
