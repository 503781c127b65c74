#include "core/router/PrefixIndex.h"

#include <bit>
#include <vector>

namespace kvscope {

std::size_t PrefixIndex::stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes) {
  const WorkerMask bit = WorkerMask{1} << worker;
  std::size_t added = 0;
  for (BlockHash h : hashes) {
    auto [it, inserted] = map_.try_emplace(h);
    Entry& e = it->second;
    if (inserted) {
      e.owner = session;
    } else if (e.owner != session) {
      e.owner |= Entry::kShared;
    }
    added += (e.workers & bit) == 0;
    e.workers |= bit;
  }
  return added;
}

std::size_t PrefixIndex::removed(WorkerId worker, std::span<const BlockHash> hashes) {
  const WorkerMask bit = WorkerMask{1} << worker;
  std::size_t dropped = 0;
  for (BlockHash h : hashes) {
    auto it = map_.find(h);
    if (it == map_.end()) continue;
    dropped += (it->second.workers & bit) != 0;
    it->second.workers &= ~bit;
    if (it->second.workers == 0) map_.erase(it);
  }
  return dropped;
}

void PrefixIndex::clearWorker(WorkerId worker) {
  const WorkerMask bit = WorkerMask{1} << worker;
  std::vector<BlockHash> gone;
  for (auto& [h, e] : map_) {
    e.workers &= ~bit;
    if (e.workers == 0) gone.push_back(h);
  }
  for (BlockHash h : gone) map_.erase(h);
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
  for (BlockHash h : hashes) {
    auto it = map_.find(h);
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
}  // namespace kvscope
