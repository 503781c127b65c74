#include "core/router/Router.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/router/PolicyRegistry.h"

namespace kvscope {

Router::Router(int num_workers, int block_size, const KnobRegistry& knobs, std::uint64_t seed, IndexKind index)
    : num_workers_(num_workers),
      block_size_(block_size),
      knobs_(knobs),
      policy_(makePolicy("kv-aware")),
      index_kind_(index),
      assigned_(static_cast<std::size_t>(num_workers), 0),
      assignments_(static_cast<std::size_t>(num_workers), 0),
      active_(num_workers),
      tree_blocks_(static_cast<std::size_t>(num_workers), 0),
      proxy_cache_(num_workers),
      proxy_cached_(static_cast<std::size_t>(num_workers), 0),
      proxy_capacity_(static_cast<std::size_t>(num_workers), 0),
      rng_(seed ^ 0x726f75746572ULL) {
  active_.setCountingBlocks(policy_->readsActiveBlocks());
}

bool Router::setPolicy(std::string_view name) {
  auto p = makePolicy(name);
  if (!p) return false;
  policy_ = std::move(p);
  active_.setCountingBlocks(policy_->readsActiveBlocks());
  return true;
}

void Router::setSessionState(bool on) {
  session_state_ = on;
  session_cache_.clear();  // states are not kept up to date while off
}

void Router::fullMatch(std::span<const BlockHash> hashes, SessionId session, PrefixIndex::Match& out) const {
  if (index_kind_ == IndexKind::Chain)
    chain_.match(hashes, session, num_workers_, out);
  else
    index_.match(hashes, session, num_workers_, out);
}

std::size_t Router::indexBlocks() const { return index_kind_ == IndexKind::Chain ? chain_.size() : index_.size(); }
std::size_t Router::indexBytes() const {
  return index_kind_ == IndexKind::Chain ? chain_.memoryBytes() : index_.memoryBytes();
}

void Router::decide(const RouteRequest& request, std::span<const WorkerLoad> loads, RouteDecision& out) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = phase_timing_ ? Clock::now() : Clock::time_point{};
  if (session_state_ && index_kind_ == IndexKind::PerBlock)
    session_cache_.match(index_, request.hashes, request.session, num_workers_, match_);
  else
    fullMatch(request.hashes, request.session, match_);
  matched_ = {request.id, request.hashes.size(), request.hashes.empty() ? 0 : request.hashes.back(), indexVersion()};
  WorkerId bound = boundWorker(request.session);
  if (bound != kNoWorker && !loads[static_cast<std::size_t>(bound)].alive) bound = kNoWorker;
  RouteContext ctx{request,  loads,        match_,         block_size_,
                   bound,    knobs_,       decisions_++,   rng_.uniform01(),
                   &active_, tree_blocks_, disaggregated_, /*proxy_cached=*/{}};
  if (proxyView()) {
    const int stride = ProxyBlockCache::stride(static_cast<int>(knobs_.getInt(KnobId::ProxyBlockTokens)), block_size_);
    if (stride != proxy_stride_) {
      proxy_cache_.clear();  // blocks of another size: the old keys mean nothing
      proxy_stride_ = stride;
    }
    const std::int64_t block_tokens = static_cast<std::int64_t>(stride) * block_size_;
    const long configured = knobs_.getInt(KnobId::ProxyLruBlocks);
    const auto n = std::min<std::size_t>(loads.size(), proxy_cached_.size());
    for (std::size_t w = 0; w < n; ++w) {
      proxy_capacity_[w] =
          configured > 0 ? static_cast<std::size_t>(configured)
                         : static_cast<std::size_t>(std::max<std::int64_t>(0, loads[w].kv_capacity) / block_tokens);
      proxy_cached_[w] = std::min<std::int64_t>(
          request.input_tokens,
          proxy_cache_.prefixHit(static_cast<WorkerId>(w), request.hashes, stride) * block_tokens);
    }
    ctx.proxy_cached = std::span<const std::int64_t>(proxy_cached_.data(), n);
  }
  out.request = request.id;
  out.session = request.session;
  out.turn = request.turn;
  out.candidates.clear();
  const Clock::time_point scoring = phase_timing_ ? Clock::now() : Clock::time_point{};
  policy_->decide(ctx, out);
  if (phase_timing_) {
    const auto ns = [](Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); };
    phase_times_ = {ns(scoring - started), ns(Clock::now() - scoring)};
  }
  if (out.chosen != kNoWorker) {
    policy_->routed(ctx, out.chosen);
    // The lab's select() counts the D it picks for a session not bound there (decode_assignment_counts).
    // Counted when decided, not when admitted: a burst's first turns are decided before any admission
    // returns, and E3's floor (measured D0 24%) spread them from the start.
    if (out.chosen != bound) ++assignments_[static_cast<std::size_t>(out.chosen)];
  }
}

void Router::track(RequestId request, WorkerId worker, std::span<const BlockHash> hashes, std::int64_t input_tokens) {
  if (worker < 0 || worker >= num_workers_) return;
  std::int64_t cached = 0;
  if (proxyView() && proxy_stride_ > 0) {
    // The lab's proxy counts the uncached tokens it estimated as the instance's pending prefill,
    // then remembers the prompt as cached there.
    cached = proxy_cache_.prefixHit(worker, hashes, proxy_stride_) * proxy_stride_ * block_size_;
    proxy_cache_.insert(worker, hashes, proxy_stride_, proxy_capacity_[static_cast<std::size_t>(worker)]);
  } else {
    // Dynamo's new_tokens: the prompt minus what the indexer says the worker has cached. The
    // request was usually just decided on an index that has not changed since: its match holds.
    const MatchedRequest now{request, hashes.size(), hashes.empty() ? 0 : hashes.back(), indexVersion()};
    const PrefixIndex::Match* m = &match_;
    if (!(now == matched_)) {
      fullMatch(hashes, 0, track_match_);
      m = &track_match_;
    }
    cached = static_cast<std::int64_t>(m->prefix_blocks[static_cast<std::size_t>(worker)]) * block_size_;
  }
  active_.add(request, worker, hashes, std::max<std::int64_t>(0, input_tokens - cached), input_tokens);
}

bool Router::proxyView() const { return policy_->readsCacheView() && knobs_.getInt(KnobId::CacheView) == 1; }

std::size_t Router::storeBlocks(WorkerId worker, SessionId session, std::span<const BlockHash> hashes) {
  if (index_kind_ == IndexKind::Chain) {  // a bare list: taken as a chain from the root
    const std::size_t n = chain_.stored(worker, session, hashes, 0);
    tree_blocks_[static_cast<std::size_t>(worker)] += static_cast<std::int64_t>(n);
    return n;
  }
  lost_exclusive_.clear();
  shared_at_.clear();
  const std::size_t n = index_.stored(worker, session, hashes, session_state_ ? &lost_exclusive_ : nullptr,
                                      session_state_ ? &shared_at_ : nullptr);
  for (SessionId s : lost_exclusive_) session_cache_.forget(s);
  if (session_state_) session_cache_.stored(worker, session, hashes, shared_at_);
  tree_blocks_[static_cast<std::size_t>(worker)] += static_cast<std::int64_t>(n);
  return n;
}

std::size_t Router::removeBlocks(WorkerId worker, std::span<const BlockHash> hashes) {
  const std::size_t n =
      index_kind_ == IndexKind::Chain ? chain_.removedAnywhere(worker, hashes) : index_.removed(worker, hashes);
  tree_blocks_[static_cast<std::size_t>(worker)] -= static_cast<std::int64_t>(n);
  return n;
}

int Router::nextRetry(const RouteDecision& d, int pos) const {
  // One retry, with the runner-up: the lab's policy re-picks once on an admission failure and then
  // falls back to seeding on its first choice.
  if (pos != 0) return -1;
  const bool kv_family = policy_->retriesWithinEpsilon();
  for (int i = 1; i < static_cast<int>(d.candidates.size()); ++i) {
    const auto& c = d.candidates[static_cast<std::size_t>(i)];
    if (!c.eligible) continue;
    if (kv_family && std::abs(d.candidates.front().score - c.score) > knobs_.get(KnobId::Epsilon)) return -1;
    return i;
  }
  return -1;
}

void Router::bind(SessionId session, WorkerId worker) {
  auto [it, inserted] = bindings_.try_emplace(session, worker);
  if (!inserted) {
    if (it->second == worker) return;
    --assigned_[static_cast<std::size_t>(it->second)];
    it->second = worker;
  }
  ++assigned_[static_cast<std::size_t>(worker)];
}

void Router::unbind(SessionId session) {
  auto it = bindings_.find(session);
  if (it == bindings_.end()) return;
  --assigned_[static_cast<std::size_t>(it->second)];
  bindings_.erase(it);
}

WorkerId Router::boundWorker(SessionId session) const {
  auto it = bindings_.find(session);
  return it == bindings_.end() ? kNoWorker : it->second;
}

void Router::onBlocksStored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes) {
  storeBlocks(worker, session, hashes);
}
void Router::onBlocksRemoved(WorkerId worker, std::span<const BlockHash> hashes) { removeBlocks(worker, hashes); }
void Router::onChainStored(WorkerId worker, SessionId session, std::span<const BlockHash> path, std::size_t from) {
  if (index_kind_ == IndexKind::PerBlock) {
    storeBlocks(worker, session, path.subspan(from));
    return;
  }
  if (worker < 0 || worker >= num_workers_) return;
  tree_blocks_[static_cast<std::size_t>(worker)] +=
      static_cast<std::int64_t>(chain_.stored(worker, session, path, from));
}

void Router::onChainRemoved(WorkerId worker, std::span<const BlockHash> path, std::size_t from) {
  if (index_kind_ == IndexKind::PerBlock) {
    KvEventListener::onChainRemoved(worker, path, from);
    return;
  }
  if (worker < 0 || worker >= num_workers_) return;
  tree_blocks_[static_cast<std::size_t>(worker)] -= static_cast<std::int64_t>(chain_.removed(worker, path, from));
}

void Router::onWorkerCleared(WorkerId worker) {
  index_.clearWorker(worker);
  chain_.clearWorker(worker);
  tree_blocks_[static_cast<std::size_t>(worker)] = 0;
}

}  // namespace kvscope
