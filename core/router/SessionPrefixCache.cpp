#include "core/router/SessionPrefixCache.h"

#include <algorithm>

namespace kvscope {

void SessionPrefixCache::match(const PrefixIndex& index, std::span<const BlockHash> hashes, SessionId session,
                               int num_workers, PrefixIndex::Match& out) {
  const int n = std::clamp(num_workers, 0, kMaxWorkers);
  auto [it, inserted] = states_.try_emplace(session);
  State& st = it->second;
  bool extends = !inserted && st.length > 0 && st.length <= hashes.size() && hashes[st.length - 1] == st.last &&
                 st.workers == n;
  std::uint64_t print = 0;
  if (extends) {
    print = fingerprint(0, hashes.first(st.length));
    extends = print == st.fingerprint;
  }
  print = extends ? fingerprint(print, hashes.subspan(st.length)) : fingerprint(0, hashes);
  if (extends) {
    restore(st, n, out);
    removedFromChain(index, hashes, st, out).forEach([&](WorkerId w) {
      out.prefix_blocks[static_cast<std::size_t>(w)] = 0;
      out.exclusive_blocks[static_cast<std::size_t>(w)] = 0;
    });
    index.resume(hashes, session, n, out);
    ++resumed_;
  } else {
    index.match(hashes, session, n, out);
    ++recomputed_;
  }
  st.length = static_cast<std::uint32_t>(hashes.size());
  st.workers = n;
  st.last = hashes.empty() ? 0 : hashes.back();
  st.fingerprint = print;
  st.tick = index.tick();
  st.used = ++clock_;
  save(out, n, st);
  if (inserted && states_.size() > capacity_) evictOldest();
}

void SessionPrefixCache::save(const PrefixIndex::Match& m, int n, State& st) {
  // The common pair by majority vote; every worker that differs is kept apart.
  std::int32_t p = 0, e = 0;
  int votes = 0;
  for (int w = 0; w < n; ++w) {
    const auto i = static_cast<std::size_t>(w);
    if (votes == 0) {
      p = m.prefix_blocks[i];
      e = m.exclusive_blocks[i];
    }
    votes += m.prefix_blocks[i] == p && m.exclusive_blocks[i] == e ? 1 : -1;
  }
  st.common_prefix = p;
  st.common_exclusive = e;
  st.others.clear();
  for (int w = 0; w < n; ++w) {
    const auto i = static_cast<std::size_t>(w);
    if (m.prefix_blocks[i] != p || m.exclusive_blocks[i] != e) st.others.push_back({w, m.prefix_blocks[i], m.exclusive_blocks[i]});
  }
  if (st.others.capacity() > 2 * st.others.size() + 8) st.others.shrink_to_fit();
}

void SessionPrefixCache::restore(const State& st, int n, PrefixIndex::Match& m) {
  std::fill_n(m.prefix_blocks.begin(), n, st.common_prefix);
  std::fill_n(m.exclusive_blocks.begin(), n, st.common_exclusive);
  for (const Depth& d : st.others) {
    m.prefix_blocks[static_cast<std::size_t>(d.worker)] = d.prefix;
    m.exclusive_blocks[static_cast<std::size_t>(d.worker)] = d.exclusive;
  }
}

WorkerSet SessionPrefixCache::removedFromChain(const PrefixIndex& index, std::span<const BlockHash> hashes,
                                               const State& st, const PrefixIndex::Match& depth) {
  WorkerSet reset;
  std::int32_t scan = 0;  // the longest remembered depth among the workers with removals since
  removed_.clear();
  filter_.fill(0);
  for (int w = 0; w < st.workers; ++w) {
    const std::int32_t d = depth.prefix_blocks[static_cast<std::size_t>(w)];
    if (index.lastRemoval(w) <= st.tick || d == 0) continue;
    log_.clear();
    if (!index.removedSince(w, st.tick, kMaxRemovalsChecked, log_)) {
      reset.set(w);
      continue;
    }
    for (BlockHash h : log_) {
      removed_.emplace_back(h, w);
      filter_[(h >> 6) & 63] |= std::uint64_t{1} << (h & 63);
    }
    scan = std::max(scan, d);
  }
  if (removed_.empty()) return reset;
  std::sort(removed_.begin(), removed_.end());
  // One sequential pass over the remembered prefix, through a 4096-bit filter that fits in L1: a
  // worker restarts from depth 0 only if a block removed from it lies within its remembered depth.
  for (std::int32_t p = 0; p < scan; ++p) {
    const BlockHash h = hashes[static_cast<std::size_t>(p)];
    if ((filter_[(h >> 6) & 63] >> (h & 63) & 1) == 0) continue;
    for (auto it = std::lower_bound(removed_.begin(), removed_.end(), std::pair<BlockHash, WorkerId>{h, 0});
         it != removed_.end() && it->first == h; ++it)
      if (p < depth.prefix_blocks[static_cast<std::size_t>(it->second)]) reset.set(it->second);
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
