#include "core/router/PrefixIndex.h"

#include <algorithm>
#include <limits>

#include "core/model/TableBytes.h"

namespace kvscope {

namespace {
bool inRange(WorkerId w) { return w >= 0 && w < kMaxWorkers; }

// A walk's lookups are independent of one another, but each one misses the cache in a large index
// (a session's new blocks were last touched when they were stored), and the walk's own work on a
// block (narrowing, counting) sits between one lookup and the next. So the lookups are done in
// batches of kBatch, in a loop of nothing else, where the processor overlaps their misses as in a
// plain loop of lookups; the walk then reads the batch. A walk that jumps (resume() skipping to a
// worker's depth) starts a batch there; at most kBatch - 1 lookups past the walk's end are wasted.
template <typename Map, typename Entry>
class BatchedLookup {
 public:
  BatchedLookup(const Map& map, std::span<const BlockHash> hashes) : map_(map), hashes_(hashes) {}

  // The entry of hashes[i] (null when absent). Walks ask in increasing order; a position outside
  // the batch held (a jump) starts a new one there.
  const Entry* at(std::size_t i) {
    if (i >= end_ || i < begin_) {
      begin_ = i;
      end_ = std::min(hashes_.size(), i + kBatch);
      for (std::size_t k = begin_; k < end_; ++k) {
        auto it = map_.find(hashes_[k]);
        batch_[k - begin_] = it == map_.end() ? nullptr : &it->second;
      }
    }
    return batch_[i - begin_];
  }

 private:
  static constexpr std::size_t kBatch = 16;
  const Map& map_;
  std::span<const BlockHash> hashes_;
  std::size_t begin_ = 0, end_ = 0;  // the positions batch_ holds
  std::array<const Entry*, kBatch> batch_{};
};
// Where each worker joins resume()'s walk. Most of a session's workers start at the same depth (the
// shared boilerplate's): that depth (found by majority vote) joins as one set, the rest one by one
// in depth order, so a 512-D cluster sorts a handful of workers, not 512.
struct StartDepths {
  std::int32_t common = 0;
  WorkerSet group;
  int group_count = 0;
  std::array<std::uint64_t, kMaxWorkers> others;  // depth << 16 | worker, sorted; the first n_others
  int n_others = 0;

  std::int32_t depthOf(int k) const { return static_cast<std::int32_t>(others[static_cast<std::size_t>(k)] >> 16); }
  WorkerId workerOf(int k) const { return static_cast<WorkerId>(others[static_cast<std::size_t>(k)] & 0xFFFF); }

  // From the known depths of workers 0..n-1, each clamped into [0, length] in place.
  void sort(std::array<std::int32_t, kMaxWorkers>& depths, int n, std::int32_t length) {
    int votes = 0;
    for (int w = 0; w < n; ++w) {
      const std::int32_t d = std::clamp(depths[static_cast<std::size_t>(w)], 0, length);
      depths[static_cast<std::size_t>(w)] = d;
      if (votes == 0) common = d;
      votes += d == common ? 1 : -1;
    }
    for (int w = 0; w < n; ++w) {
      const std::int32_t d = depths[static_cast<std::size_t>(w)];
      if (d == common) {
        group.set(w);
        ++group_count;
      } else {
        others[static_cast<std::size_t>(n_others++)] =
            static_cast<std::uint64_t>(d) << 16 | static_cast<std::uint64_t>(w);
      }
    }
    std::sort(others.begin(), others.begin() + n_others);
  }
};

}  // namespace

std::size_t PrefixIndex::stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes,
                                std::vector<SessionId>* lost_exclusive, std::vector<std::uint32_t>* shared_at) {
  if (!inRange(worker) || hashes.empty()) return 0;
  const std::uint32_t me = ordinals_.intern(session);
  std::size_t added = 0;
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    auto [it, inserted] = map_.try_emplace(hashes[i]);
    Entry& e = it->second;
    if (inserted) {
      e.owner = me;
    } else if (e.owner != me) {
      if (lost_exclusive && (e.owner & kShared) == 0 && e.owner < ordinals_.size())
        lost_exclusive->push_back(ordinals_.session(e.owner));
      e.owner |= kShared;
    }
    if (shared_at && e.owner != me) shared_at->push_back(static_cast<std::uint32_t>(i));
    added += holders_.add(e.holders, worker);
  }
  ++version_;  // a holder or an owner may have changed
  return added;
}

std::size_t PrefixIndex::removed(WorkerId worker, std::span<const BlockHash> hashes) {
  if (!inRange(worker)) return 0;
  const auto w = static_cast<std::size_t>(worker);
  std::vector<Removal>& log = removals_[w];
  if (log.empty()) log.resize(kRemovalLog);
  const std::uint64_t tick = tick_ + 1;
  std::size_t dropped = 0;
  for (BlockHash h : hashes) {
    auto it = map_.find(h);
    if (it == map_.end() || !holders_.remove(it->second.holders, worker)) continue;
    ++dropped;
    if (const std::uint32_t owner = it->second.owner; owner & kShared) {
      last_shared_removal_[w] = tick;
    } else if (owner < ordinals_.size()) {
      if (owner >= own_removal_.size()) own_removal_.resize(ordinals_.size(), 0);
      own_removal_[owner] = tick;
    }
    if (it->second.holders == 0) map_.erase(it);
    Removal& slot = log[removals_next_[w]];
    forgotten_[w] = std::max(forgotten_[w], slot.tick);
    slot = {tick, h};
    removals_next_[w] = static_cast<std::uint32_t>((removals_next_[w] + 1) % kRemovalLog);
  }
  if (dropped > 0) {
    last_removal_[w] = tick_ = tick;
    ++version_;
  }
  return dropped;
}

bool PrefixIndex::removedSince(WorkerId worker, std::uint64_t since, std::size_t max,
                               std::vector<BlockHash>& out) const {
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
  if (!inRange(worker)) return;
  for (auto it = map_.begin(); it != map_.end();) {
    if (holders_.remove(it->second.holders, worker) && it->second.holders == 0)
      map_.erase(it++);
    else
      ++it;
  }
  // Not logged block by block: anything known of the worker before now is void.
  const auto w = static_cast<std::size_t>(worker);
  last_removal_[w] = last_shared_removal_[w] = forgotten_[w] = ++tick_;
  ++version_;
}

std::uint64_t PrefixIndex::lastOwnRemoval(SessionId session) const {
  const std::uint32_t o = ordinals_.of(session);
  return o < own_removal_.size() ? own_removal_[o] : 0;
}

bool PrefixIndex::holds(BlockHash h, WorkerId worker) const {
  auto it = map_.find(h);
  return it != map_.end() && inRange(worker) && holders_.test(it->second.holders, worker);
}

WorkerSet PrefixIndex::holders(BlockHash h) const {
  auto it = map_.find(h);
  return it == map_.end() ? WorkerSet{} : holders_.set(it->second.holders);
}

void PrefixIndex::match(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& out) const {
  const int n = std::clamp(num_workers, 0, kMaxWorkers);
  const int words = WorkerSet::wordsFor(n);
  const std::uint32_t me = ordinals_.of(session);
  HolderWalk walk = HolderWalk::fromAll(holders_, n);
  // One lookup per block while any worker still matches. A worker's counts are the running totals
  // at the block where it drops out, so there is no per-worker work per block.
  std::int32_t matched = 0, exclusive = 0;
  out.first_foreign = kNoForeign;
  auto settle = [&](const WorkerSet& dropped) { out.settle(dropped, matched, exclusive, words); };
  BatchedLookup<decltype(map_), Entry> lookups(map_, hashes);
  for (std::size_t i = 0; i < hashes.size() && walk.count > 0; ++i) {
    const Entry* e = lookups.at(i);
    walk.narrow(e != nullptr, e ? e->holders : 0, settle);
    if (walk.count == 0) return;
    if (e->owner != me && (e->owner & kShared) == 0 && out.first_foreign == kNoForeign) out.first_foreign = matched;
    ++matched;
    exclusive += e->owner == me;
  }
  settle(walk.alive);
}

void PrefixIndex::resume(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& inout) const {
  const int n = std::clamp(num_workers, 0, kMaxWorkers);
  if (n == 0) return;
  const int words = WorkerSet::wordsFor(n);
  const std::uint32_t me = ordinals_.of(session);
  const auto length = static_cast<std::int32_t>(hashes.size());

  // Workers join the walk at their starting depth (clamped into the request here).
  StartDepths starts;
  starts.sort(inout.prefix_blocks, n, length);
  const std::int32_t common = starts.common;
  const WorkerSet& group = starts.group;
  const int group_count = starts.group_count;
  const int n_others = starts.n_others;

  // `exclusive` counts the session's own blocks over the walked positions; a worker's own count is
  // that running total plus the offset fixed when it joined (its known count minus the total then).
  std::array<std::int32_t, kMaxWorkers> offset;
  std::int32_t exclusive = 0, pos = 0;
  HolderWalk walk(holders_, words);
  BatchedLookup<decltype(map_), Entry> lookups(map_, hashes);
  auto settle = [&](const WorkerSet& dropped) {
    dropped.forEach(
        [&](WorkerId w) {
          inout.prefix_blocks[static_cast<std::size_t>(w)] = pos;
          inout.exclusive_blocks[static_cast<std::size_t>(w)] = exclusive + offset[static_cast<std::size_t>(w)];
        },
        words);
  };
  int next = 0;
  bool group_joined = group_count == 0;
  constexpr std::int32_t kNever = std::numeric_limits<std::int32_t>::max();
  while (true) {
    if (walk.count == 0) {
      if (next == n_others && group_joined) return;
      // Nobody is walking: skip straight to the next depth someone starts at.
      pos = std::min(next < n_others ? starts.depthOf(next) : kNever, group_joined ? kNever : common);
    }
    for (; next < n_others && starts.depthOf(next) == pos; ++next) {
      const WorkerId w = starts.workerOf(next);
      walk.alive.set(w);
      ++walk.count;
      offset[static_cast<std::size_t>(w)] = inout.exclusive_blocks[static_cast<std::size_t>(w)] - exclusive;
    }
    if (!group_joined && pos == common) {
      group.forEach(
          [&](WorkerId w) {
            offset[static_cast<std::size_t>(w)] = inout.exclusive_blocks[static_cast<std::size_t>(w)] - exclusive;
          },
          words);
      walk.alive.unite(group, words);
      walk.count += group_count;
      group_joined = true;
    }
    if (pos == length) {
      settle(walk.alive);
      return;
    }
    const Entry* e = lookups.at(static_cast<std::size_t>(pos));
    walk.narrow(e != nullptr, e ? e->holders : 0, settle);
    if (walk.count > 0) {
      exclusive += e->owner == me;
      if (e->owner != me && (e->owner & kShared) == 0) inout.first_foreign = std::min(inout.first_foreign, pos);
    }
    ++pos;
  }
}

std::size_t PrefixIndex::memoryBytes() const {
  return flatTableBytes(map_) + ordinals_.memoryBytes() + holders_.memoryBytes() +
         own_removal_.capacity() * sizeof(std::uint64_t);
}

std::size_t PrefixIndex::removalLogBytes() const {
  std::size_t n = 0;
  for (const auto& log : removals_) n += log.capacity() * sizeof(Removal);
  return n;
}

}  // namespace kvscope
