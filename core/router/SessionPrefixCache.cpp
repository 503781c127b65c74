#include "core/router/SessionPrefixCache.h"

#include <algorithm>
#include <bit>

namespace kvscope {

void SessionPrefixCache::match(const PrefixIndex& index, std::span<const BlockHash> hashes, SessionId session,
                               int num_workers, PrefixIndex::Match& out) {
  const int n = std::clamp(num_workers, 0, kMaxWorkers);
  auto [it, inserted] = states_.try_emplace(session);
  State& st = it->second;
  bool extends = !inserted && st.length > 0 && st.length <= hashes.size() && hashes[st.length - 1] == st.last &&
                 st.depth.size() == 2 * static_cast<std::size_t>(n);
  std::uint64_t print = 0;
  if (extends) {
    print = fingerprint(0, hashes.first(st.length));
    extends = print == st.fingerprint;
  }
  print = extends ? fingerprint(print, hashes.subspan(st.length)) : fingerprint(0, hashes);
  if (extends) {
    const WorkerMask reset = removedFromChain(index, hashes, st);
    for (int w = 0; w < n; ++w) {
      const bool intact = (reset >> w & 1) == 0;
      out.prefix_blocks[w] = intact ? st.depth[w] : 0;
      out.exclusive_blocks[w] = intact ? st.depth[n + w] : 0;
    }
    index.resume(hashes, session, n, out);
    ++resumed_;
  } else {
    index.match(hashes, session, num_workers, out);
    ++recomputed_;
  }
  st.length = static_cast<std::uint32_t>(hashes.size());
  st.last = hashes.empty() ? 0 : hashes.back();
  st.fingerprint = print;
  st.tick = index.tick();
  st.used = ++clock_;
  st.depth.resize(2 * static_cast<std::size_t>(n));
  std::copy_n(out.prefix_blocks.begin(), n, st.depth.begin());
  std::copy_n(out.exclusive_blocks.begin(), n, st.depth.begin() + n);
  if (inserted && states_.size() > capacity_) evictOldest();
}

SessionPrefixCache::WorkerMask SessionPrefixCache::removedFromChain(const PrefixIndex& index,
                                                                   std::span<const BlockHash> hashes, const State& st) {
  const int n = static_cast<int>(st.depth.size() / 2);
  WorkerMask reset = 0;
  std::int32_t scan = 0;  // the longest remembered depth among the workers with removals since
  removed_.clear();
  filter_.fill(0);
  for (int w = 0; w < n; ++w) {
    if (index.lastRemoval(w) <= st.tick || st.depth[w] == 0) continue;
    log_.clear();
    if (!index.removedSince(w, st.tick, kMaxRemovalsChecked, log_)) {
      reset |= WorkerMask{1} << w;
      continue;
    }
    for (BlockHash h : log_) {
      removed_[h] |= WorkerMask{1} << w;
      filter_[(h >> 6) & 63] |= std::uint64_t{1} << (h & 63);
    }
    scan = std::max(scan, st.depth[w]);
  }
  if (removed_.empty()) return reset;
  // One sequential pass over the remembered prefix, through a 4096-bit filter that fits in L1: a
  // worker restarts from depth 0 only if a block removed from it lies within its remembered depth.
  for (std::int32_t p = 0; p < scan; ++p) {
    const BlockHash h = hashes[static_cast<std::size_t>(p)];
    if ((filter_[(h >> 6) & 63] >> (h & 63) & 1) == 0) continue;
    auto it = removed_.find(h);
    if (it == removed_.end()) continue;
    for (WorkerMask m = it->second & ~reset; m != 0; m &= m - 1) {
      const int w = std::countr_zero(m);
      if (p < st.depth[w]) reset |= WorkerMask{1} << w;
    }
  }
  return reset;
}

std::uint64_t SessionPrefixCache::fingerprint(std::uint64_t seed, std::span<const BlockHash> hashes) {
  std::uint64_t f = seed;
  for (BlockHash h : hashes) f = (f ^ h) * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  return f;
}

void SessionPrefixCache::evictOldest() {
  // Amortised O(1) per decision: one scan drops the oldest eighth, then capacity/8 inserts pass
  // before the next scan.
  std::vector<std::uint64_t> used;
  used.reserve(states_.size());
  for (const auto& [s, st] : states_) used.push_back(st.used);
  const auto cut = used.begin() + static_cast<std::ptrdiff_t>(used.size() / 8);
  std::nth_element(used.begin(), cut, used.end());
  const std::uint64_t threshold = *cut;
  absl::erase_if(states_, [&](const auto& kv) { return kv.second.used < threshold; });
}

}  // namespace kvscope
