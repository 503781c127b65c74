#include "backend/live/KvEventFeeds.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "backend/live/LiveCluster.h"

namespace kvscope {

namespace {

// Why an engine's blocks did not reach the router, said once per feed (KvRouterAlignment.h).
std::string unmatchedReason(const KvRouterAlignment::Counts& c, int router_block_size) {
  std::string out;
  const auto add = [&](std::uint64_t n, const std::string& why) {
    if (n) out += (out.empty() ? "" : "; ") + std::to_string(n) + " " + why;
  };
  add(c.no_tokens, "blocks stored without token ids (the engine does not send them)");
  add(c.other_size, "blocks of " + std::to_string(c.last_block_size) + " tokens, the router's block_size is " +
                        std::to_string(router_block_size) + " (set router.block_size to the engine's)");
  add(c.unknown_parent, "blocks continuing a chain stored before KVScope attached");
  add(c.lora, "LoRA blocks (no adapter in the router's hashes)");
  add(c.overflow, "blocks past the per-worker limit");
  return out;
}

// The GPU-tier blocks stored and removed so far, as the snapshot's gauges carry them.
std::pair<std::int64_t, std::int64_t> churn(const KvBlockState::Counts& c) {
  const auto gauge = [](std::uint64_t n) { return static_cast<std::int64_t>(std::min<std::uint64_t>(n, INT64_MAX)); };
  return {gauge(c.stored), gauge(c.removed)};
}

}  // namespace

void KvEventFeeds::onBatch(Feed* f, const KvEventBatch& batch, bool events_alone) {
  std::vector<EventPayload> out;
  std::int64_t tokens = 0, blocks = 0, stored = 0, removed = 0;
  KvRouterAlignment::Update aligned;
  std::string unmatched;
  {
    std::lock_guard lock(mutex_);
    out = state_->apply(f->worker, batch);
    tokens = state_->tokens(f->worker);
    blocks = static_cast<std::int64_t>(state_->blocks(f->worker));
    std::tie(stored, removed) = churn(state_->counts(f->worker));
    if (alignment_) {
      aligned = alignment_->apply(f->worker, batch);
      unmatched = unmatchedReason(alignment_->counts(f->worker), alignment_->blockSize());
      if (!unmatched.empty() && !f->said_unmatched)
        f->said_unmatched = true;
      else
        unmatched.clear();
    }
  }
  if (!unmatched.empty() && warn_)
    warn_(f->worker_name +
          " kv_events: some blocks cannot be matched to the router's view (cache_view exact): " + unmatched);
  if (!out.empty()) cluster_.post(std::move(out));
  if (router_ && (!aligned.stored.empty() || !aligned.removed.empty())) router_->update(f->worker, aligned);
  cluster_.setKvEventBlocks(f->worker, blocks, tokens, stored, removed, events_alone);
}

void KvEventFeeds::onRestarted(Feed* f, bool events_alone) {
  if (warn_)
    warn_(f->worker_name + " kv_events " + f->endpoint +
          ": the publisher started over (engine restart): its blocks are forgotten");
  KvRouterAlignment::Update gone;
  std::int64_t stored = 0, removed = 0;
  {
    std::lock_guard lock(mutex_);
    std::tie(stored, removed) = churn(state_->counts(f->worker));
    state_->forget(f->worker);
    if (alignment_) gone.removed = alignment_->forget(f->worker);
  }
  if (router_ && !gone.removed.empty()) router_->update(f->worker, gone);
  cluster_.setKvEventBlocks(f->worker, 0, 0, stored, removed, events_alone);
}

KvEventSubscriber::Listener KvEventFeeds::listenerFor(Feed* f, bool events_alone, std::size_t index) {
  KvEventSubscriber::Listener listener;
  listener.batch = [this, f, events_alone](std::uint64_t, KvEventBatch batch) { onBatch(f, batch, events_alone); };
  listener.gap = [this, f](std::uint64_t first, std::uint64_t last, const std::string& why) {
    const std::string text = "batches " + std::to_string(first) + "-" + std::to_string(last) + " lost: " + why;
    if (warn_) warn_(f->worker_name + " kv_events " + f->endpoint + ": " + text);
    std::lock_guard lock(mutex_);
    f->why = text;
  };
  listener.health = [this, f, events_alone, index](bool reachable, const std::string& why) {
    {
      std::lock_guard lock(mutex_);
      f->reachable = reachable;
      if (!reachable) f->why = why;
    }
    if (!reachable && warn_) warn_(f->worker_name + " kv_events: " + why);
    if (events_alone) cluster_.setHealth(index, reachable ? WorkerHealth::Ok : WorkerHealth::Unreachable, why);
  };
  listener.restarted = [this, f, events_alone]() { onRestarted(f, events_alone); };
  listener.undecodable = [this, f](std::uint64_t seq, const std::string& why) {
    if (warn_)
      warn_(f->worker_name + " kv_events " + f->endpoint + ": batch " + std::to_string(seq) +
            " is not a KV event batch: " + why);
  };
  return listener;
}

KvEventFeeds::KvEventFeeds(const ClusterConfig& config, const std::vector<LiveWorkerRef>& refs,
                           const std::vector<std::size_t>& status_index, LiveCluster& cluster, Warn warn,
                           std::optional<RouterLink> router)
    : cluster_(cluster), warn_(std::move(warn)), router_(std::move(router)) {
  int serving = 0;
  for (const auto& r : refs) serving += r.worker != kNoWorker;
  state_ = std::make_unique<KvBlockState>(serving);
  if (router_) alignment_ = std::make_unique<KvRouterAlignment>(serving, router_->block_size);
  for (std::size_t i = 0; i < config.workers.size(); ++i) {
    const LiveWorkerConfig& w = config.workers[i];
    const LiveWorkerRef& ref = refs[i];
    if (ref.worker == kNoWorker) {
      if (!w.kv_events.empty() && warn_)
        warn_(w.id + ": kv_events of a prefill worker are not followed (the router routes on decode caches)");
      continue;
    }
    const bool events_alone = w.metrics_url.empty();  // then the feeds speak for its KV use and health
    const std::size_t index = status_index[i];
    for (const KvEventEndpoint& e : w.kv_events) {
      auto feed = std::make_unique<Feed>();
      feed->worker_name = w.id;
      feed->worker = ref.worker;
      feed->endpoint = e.endpoint;
      feed->subscriber = std::make_unique<KvEventSubscriber>(KvEventSubscriber::Endpoint{e.endpoint, e.replay, e.topic},
                                                             listenerFor(feed.get(), events_alone, index));
      feeds_.push_back(std::move(feed));
    }
  }
}

KvEventFeeds::~KvEventFeeds() { stop(); }

void KvEventFeeds::start() {
  for (auto& f : feeds_) f->subscriber->start();
}

void KvEventFeeds::stop() {
  for (auto& f : feeds_) f->subscriber->stop();
}

std::vector<KvEventFeeds::FeedStatus> KvEventFeeds::status() const {
  std::vector<FeedStatus> out;
  std::lock_guard lock(mutex_);
  for (const auto& f : feeds_)
    out.push_back({f->worker_name, f->endpoint, f->reachable, f->why, f->subscriber->counts(),
                   state_->blocks(f->worker),
                   alignment_ ? std::optional(alignment_->counts(f->worker)) : std::nullopt});
  return out;
}

}  // namespace kvscope
