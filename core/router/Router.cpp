#include "router/Router.h"

#include <cmath>

namespace kvscope {

Router::Router(int num_workers, int block_size, const KnobRegistry& knobs, std::uint64_t seed)
    : num_workers_(num_workers), block_size_(block_size), knobs_(knobs), policy_(makePolicy("kv-aware")),
      assigned_(static_cast<std::size_t>(num_workers), 0), rng_(seed ^ 0x726f75746572ULL) {}

bool Router::setPolicy(std::string_view name) {
  auto p = makePolicy(name);
  if (!p) return false;
  policy_ = std::move(p);
  return true;
}

void Router::decide(const RouteRequest& request, std::span<const WorkerLoad> loads, RouteDecision& out) {
  index_.match(request.hashes, request.session, num_workers_, match_);
  WorkerId bound = boundWorker(request.session);
  if (bound != kNoWorker && !loads[static_cast<std::size_t>(bound)].alive) bound = kNoWorker;
  const RouteContext ctx{request, loads, match_, block_size_, bound, knobs_, decisions_++, rng_.uniform01()};
  out.request = request.id;
  out.session = request.session;
  out.turn = request.turn;
  out.candidates.clear();
  policy_->decide(ctx, out);
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
  index_.stored(worker, session, hashes);
}
void Router::onBlocksRemoved(WorkerId worker, std::span<const BlockHash> hashes) { index_.removed(worker, hashes); }
void Router::onWorkerCleared(WorkerId worker) { index_.clearWorker(worker); }

}  // namespace kvscope
