#include "router/SessionPrefixCache.h"

#include <algorithm>

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
    for (int w = 0; w < n; ++w) {
      const bool intact = index.lastRemoval(w) <= st.tick;
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
