#include "core/router/PrefixIndex.h"

#include <algorithm>
#include <bit>
#include <vector>

namespace kvscope {

namespace {
// A walk's lookups are independent, but each one misses the cache in a large index (a session's
// new blocks were last touched when they were stored): prefetching the slot a few blocks ahead
// overlaps those misses instead of paying them one after the other.
constexpr std::size_t kPrefetchAhead = 8;
}  // namespace

std::size_t PrefixIndex::stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes,
                                std::vector<SessionId>* lost_exclusive) {
  const WorkerMask bit = WorkerMask{1} << worker;
  std::size_t added = 0;
  for (BlockHash h : hashes) {
    auto [it, inserted] = map_.try_emplace(h);
    Entry& e = it->second;
    if (inserted) {
      e.owner = session;
    } else if (e.owner != session) {
      if (lost_exclusive && (e.owner & Entry::kShared) == 0) lost_exclusive->push_back(e.owner);
      e.owner |= Entry::kShared;
    }
    added += (e.workers & bit) == 0;
    e.workers |= bit;
  }
  return added;
}

std::size_t PrefixIndex::removed(WorkerId worker, std::span<const BlockHash> hashes) {
  const WorkerMask bit = WorkerMask{1} << worker;
  const auto w = static_cast<std::size_t>(worker);
  std::vector<Removal>& log = removals_[w];
  if (log.empty()) log.resize(kRemovalLog);
  const std::uint64_t tick = tick_ + 1;
  std::size_t dropped = 0;
  for (BlockHash h : hashes) {
    auto it = map_.find(h);
    if (it == map_.end() || (it->second.workers & bit) == 0) continue;
    ++dropped;
    it->second.workers &= ~bit;
    if (it->second.workers == 0) map_.erase(it);
    Removal& slot = log[removals_next_[w]];
    forgotten_[w] = std::max(forgotten_[w], slot.tick);
    slot = {tick, h};
    removals_next_[w] = (removals_next_[w] + 1) % kRemovalLog;
  }
  if (dropped > 0) last_removal_[w] = tick_ = tick;
  return dropped;
}

bool PrefixIndex::removedSince(WorkerId worker, std::uint64_t since, std::size_t max, std::vector<BlockHash>& out) const {
  const auto w = static_cast<std::size_t>(worker);
  if (forgotten_[w] > since) return false;
  const std::vector<Removal>& log = removals_[w];
  std::size_t i = removals_next_[w], n = 0;
  for (std::size_t k = 0; k < log.size(); ++k) {
    i = i == 0 ? log.size() - 1 : i - 1;
    if (log[i].tick <= since) break;  // ticks only grow, so older entries are older still
    if (++n > max) return false;
    out.push_back(log[i].hash);
  }
  return true;
}

void PrefixIndex::clearWorker(WorkerId worker) {
  const WorkerMask bit = WorkerMask{1} << worker;
  std::vector<BlockHash> gone;
  for (auto& [h, e] : map_) {
    e.workers &= ~bit;
    if (e.workers == 0) gone.push_back(h);
  }
  for (BlockHash h : gone) map_.erase(h);
  // Not logged block by block: anything known of the worker before now is void.
  last_removal_[static_cast<std::size_t>(worker)] = forgotten_[static_cast<std::size_t>(worker)] = ++tick_;
}

PrefixIndex::WorkerMask PrefixIndex::holders(BlockHash h) const {
  auto it = map_.find(h);
  return it == map_.end() ? 0 : it->second.workers;
}

void PrefixIndex::match(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& out) const {
  out.prefix_blocks.fill(0);
  out.exclusive_blocks.fill(0);
  WorkerMask alive = num_workers >= 64 ? ~WorkerMask{0} : ((WorkerMask{1} << num_workers) - 1);
  // Walk the chain while any worker still matches. A worker's counts are the running totals at the
  // block where it drops out, so the loop does one lookup per block and no per-worker work.
  std::int32_t matched = 0, exclusive = 0;
  auto settle = [&](WorkerMask dropped) {
    for (WorkerMask m = dropped; m != 0; m &= m - 1) {
      const auto w = static_cast<std::size_t>(std::countr_zero(m));
      out.prefix_blocks[w] = matched;
      out.exclusive_blocks[w] = exclusive;
    }
  };
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    if (i + kPrefetchAhead < hashes.size()) map_.prefetch(hashes[i + kPrefetchAhead]);
    auto it = map_.find(hashes[i]);
    const WorkerMask next = it == map_.end() ? 0 : (alive & it->second.workers);
    if (next != alive) {
      settle(alive & ~next);
      alive = next;
      if (alive == 0) return;
    }
    ++matched;
    exclusive += it->second.exclusiveTo(session);
  }
  settle(alive);
}

void PrefixIndex::resume(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& inout) const {
  const int n = std::clamp(num_workers, 0, kMaxWorkers);
  const auto length = static_cast<std::int32_t>(hashes.size());
  // Workers in order of their starting depth; each joins the walk when it reaches that depth.
  std::array<std::pair<std::int32_t, int>, kMaxWorkers> order;
  for (int w = 0; w < n; ++w) order[w] = {std::clamp(inout.prefix_blocks[w], 0, length), w};
  std::sort(order.begin(), order.begin() + n);
  for (int w = n; w < kMaxWorkers; ++w) inout.prefix_blocks[w] = inout.exclusive_blocks[w] = 0;

  // `exclusive` counts the session's own blocks over the walked positions; a worker's own count is
  // that running total plus the offset fixed when it joined (its known count minus the total then).
  std::array<std::int32_t, kMaxWorkers> offset{};
  std::int32_t exclusive = 0, pos = 0;
  WorkerMask alive = 0;
  auto settle = [&](WorkerMask dropped) {
    for (WorkerMask m = dropped; m != 0; m &= m - 1) {
      const auto w = static_cast<std::size_t>(std::countr_zero(m));
      inout.prefix_blocks[w] = pos;
      inout.exclusive_blocks[w] = exclusive + offset[w];
    }
  };
  int next = 0;
  while (true) {
    if (alive == 0) {
      if (next == n) return;
      pos = order[next].first;  // nobody is walking: skip straight to the next worker's depth
    }
    for (; next < n && order[next].first == pos; ++next) {
      const auto w = static_cast<std::size_t>(order[next].second);
      alive |= WorkerMask{1} << w;
      offset[w] = inout.exclusive_blocks[w] - exclusive;
    }
    if (pos == length) {
      settle(alive);
      return;
    }
    const auto i = static_cast<std::size_t>(pos);
    if (i + kPrefetchAhead < hashes.size()) map_.prefetch(hashes[i + kPrefetchAhead]);
    auto it = map_.find(hashes[i]);
    const WorkerMask held = it == map_.end() ? 0 : (alive & it->second.workers);
    if (held != alive) {
      settle(alive & ~held);
      alive = held;
    }
    if (held != 0) exclusive += it->second.exclusiveTo(session);
    ++pos;
  }
}
}  // namespace kvscope
