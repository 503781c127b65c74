#include "router/PrefixIndex.h"

#include <bit>
#include <vector>

namespace kvscope {

void PrefixIndex::stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes) {
  const WorkerMask bit = WorkerMask{1} << worker;
  for (BlockHash h : hashes) {
    auto [it, inserted] = map_.try_emplace(h);
    Entry& e = it->second;
    if (inserted) {
      e.owner = session;
    } else if (e.owner != session) {
      e.shared = true;
    }
    e.workers |= bit;
  }
}

void PrefixIndex::removed(WorkerId worker, std::span<const BlockHash> hashes) {
  const WorkerMask bit = WorkerMask{1} << worker;
  for (BlockHash h : hashes) {
    auto it = map_.find(h);
    if (it == map_.end()) continue;
    it->second.workers &= ~bit;
    if (it->second.workers == 0) map_.erase(it);
  }
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

bool PrefixIndex::ownedBy(BlockHash h, SessionId session) const {
  auto it = map_.find(h);
  return it != map_.end() && !it->second.shared && it->second.owner == session;
}

void PrefixIndex::match(std::span<const BlockHash> hashes, SessionId session, int num_workers, Match& out) const {
  out.prefix_blocks.fill(0);
  out.exclusive_blocks.fill(0);
  WorkerMask alive = num_workers >= 64 ? ~WorkerMask{0} : ((WorkerMask{1} << num_workers) - 1);
  // Walk the chain while any worker still matches; a worker drops out at its first missing block.
  for (BlockHash h : hashes) {
    auto it = map_.find(h);
    if (it == map_.end()) break;
    alive &= it->second.workers;
    if (alive == 0) break;
    const bool exclusive = !it->second.shared && it->second.owner == session;
    for (WorkerMask m = alive; m != 0; m &= m - 1) {
      const int w = std::countr_zero(m);
      ++out.prefix_blocks[static_cast<std::size_t>(w)];
      if (exclusive) ++out.exclusive_blocks[static_cast<std::size_t>(w)];
    }
  }
}

}  // namespace kvscope
