#include "core/router/SessionPrefixCache.h"

#include <algorithm>

namespace kvscope {

void SessionPrefixCache::match(const PrefixIndex& index, std::span<const BlockHash> hashes, SessionId session,
                               int num_workers, PrefixIndex::Match& out) {
  const int n = std::clamp(num_workers, 0, kMaxWorkers);
  auto [it, inserted] = states_.try_emplace(session);
  State& st = it->second;
  fillPrints(hashes);
  const bool extends = !inserted && st.length > 0 && st.length <= hashes.size() && hashes[st.length - 1] == st.last &&
                       st.workers == n && prints_[st.length] == st.fingerprint;
  if (extends) {
    restore(st, n, out);
    removedFromChain(index, hashes, session, st, out).forEach([&](WorkerId w) {
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
  st.fingerprint = prints_[hashes.size()];
  st.tick = index.tick();
  st.used = ++clock_;
  save(out, n, st);
  if (inserted && states_.size() > capacity_) evictOldest();
}

void SessionPrefixCache::stored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes,
                                std::span<const std::uint32_t> shared_at) {
  auto it = states_.find(session);
  if (it == states_.end() || hashes.empty()) return;
  State& st = it->second;
  if (worker < 0 || worker >= st.workers) return;
  Depth* other = nullptr;
  for (Depth& d : st.others)
    if (d.worker == worker) other = &d;
  const std::int32_t depth = other ? other->prefix : st.common_prefix;
  const std::int32_t exclusive = other ? other->exclusive : st.common_exclusive;
  const std::uint64_t print = other ? other->print : st.common_print;
  const auto length = static_cast<std::int32_t>(st.length);
  if (depth >= length) return;
  // The stored blocks continue the chain from the worker's depth (the usual store: what it lacked),
  // or are the chain from its start (a worker given the whole prompt).
  auto continues = [&](std::int32_t from, std::uint64_t from_print) {
    const auto k = static_cast<std::size_t>(length - from);
    if (hashes.size() < k || hashes[k - 1] != st.last) return false;
    std::uint64_t f = 0;
    for (std::size_t i = 0; i < k; ++i) f = extend(f, hashes[i]);
    return from_print * power(k) + f == st.fingerprint;
  };
  std::int32_t own_before = 0;  // the session's own blocks before the stored ones start
  std::size_t k = 0;
  if (continues(depth, print)) {
    own_before = exclusive;
    k = static_cast<std::size_t>(length - depth);
  } else if (depth > 0 && continues(0, 0)) {
    k = static_cast<std::size_t>(length);
  } else {
    return;
  }
  // Stored by the session itself, each block is now its own unless another session stored it too.
  const auto shared =
      std::lower_bound(shared_at.begin(), shared_at.end(), static_cast<std::uint32_t>(k)) - shared_at.begin();
  const Depth deeper{worker, length, own_before + static_cast<std::int32_t>(k) - static_cast<std::int32_t>(shared),
                     st.fingerprint};
  if (other) {
    *other = deeper;
  } else {
    st.others.push_back(deeper);
  }
  ++deepened_;
}

void SessionPrefixCache::save(const PrefixIndex::Match& m, int n, State& st) const {
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
  st.common_print = prints_[static_cast<std::size_t>(p)];
  st.first_foreign = m.first_foreign;
  st.others.clear();
  for (int w = 0; w < n; ++w) {
    const auto i = static_cast<std::size_t>(w);
    if (m.prefix_blocks[i] != p || m.exclusive_blocks[i] != e)
      st.others.push_back(
          {w, m.prefix_blocks[i], m.exclusive_blocks[i], prints_[static_cast<std::size_t>(m.prefix_blocks[i])]});
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
  m.first_foreign = st.first_foreign;
}

WorkerSet SessionPrefixCache::removedFromChain(const PrefixIndex& index, std::span<const BlockHash> hashes,
                                               SessionId session, const State& st, const PrefixIndex::Match& depth) {
  WorkerSet reset;
  std::int32_t scan = 0;  // the longest remembered depth among the workers with removals since
  auto bit = [](BlockHash h) { return std::pair{(h >> 6) % kFilterWords, std::uint64_t{1} << (h & 63)}; };
  if (!removed_.empty()) {
    filter_.fill(0);
    removed_.clear();
    first_.clear();
  }
  std::size_t budget = kRemovalBudget;
  const bool own_kept = index.lastOwnRemoval(session) <= st.tick;
  auto check = [&](WorkerId w) {
    const std::int32_t d = depth.prefix_blocks[static_cast<std::size_t>(w)];
    if (index.lastRemoval(w) <= st.tick || d == 0) return;
    // Its prefix is shared blocks and the session's own only, and none of either kind has gone.
    if (d <= st.first_foreign && index.lastSharedRemoval(w) <= st.tick &&
        (own_kept || depth.exclusive_blocks[static_cast<std::size_t>(w)] == 0)) {
      ++stamp_cleared_;
      return;
    }
    log_.clear();
    if (!index.removedSince(w, st.tick, std::min(budget, kMaxRemovalsChecked), log_)) {
      reset.set(w);
      return;
    }
    if (first_.empty()) first_.reserve(kRemovalBudget);
    budget -= log_.size();
    for (BlockHash h : log_) {
      auto [it, fresh] = first_.try_emplace(h, 0);
      removed_.push_back({w, it->second});
      it->second = static_cast<std::uint32_t>(removed_.size());
      const auto [word, mask] = bit(h);
      filter_[word] |= mask;
    }
    scan = std::max(scan, d);
  };
  // The workers whose depth differs from the common one first: the session's own D (its deepest,
  // costliest to re-walk) is among them.
  WorkerSet others;
  for (const Depth& o : st.others) {
    others.set(o.worker);
    check(o.worker);
  }
  for (int w = 0; w < st.workers; ++w)
    if (!others.test(w)) check(w);
  if (removed_.empty()) return reset;
  // One sequential pass over the remembered prefix, through the filter: a worker restarts from
  // depth 0 only if a block removed from it lies within its remembered depth.
  for (std::int32_t p = 0; p < scan; ++p) {
    const BlockHash h = hashes[static_cast<std::size_t>(p)];
    const auto [word, mask] = bit(h);
    if ((filter_[word] & mask) == 0) continue;
    auto it = first_.find(h);
    if (it == first_.end()) continue;
    for (std::uint32_t i = it->second; i != 0; i = removed_[i - 1].previous) {
      const WorkerId w = removed_[i - 1].worker;
      if (p < depth.prefix_blocks[static_cast<std::size_t>(w)]) reset.set(w);
    }
  }
  return reset;
}

std::uint64_t SessionPrefixCache::extend(std::uint64_t print, BlockHash h) {
  // The mix (splitmix64's finaliser) keeps hashes that differ in a few bits from cancelling out.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return print * kPrintBase + (h ^ (h >> 31));
}

std::uint64_t SessionPrefixCache::power(std::size_t k) {
  std::uint64_t result = 1, base = kPrintBase;
  for (; k > 0; k >>= 1, base *= base)
    if (k & 1) result *= base;
  return result;
}

void SessionPrefixCache::fillPrints(std::span<const BlockHash> hashes) {
  prints_.resize(hashes.size() + 1);
  std::uint64_t f = 0;
  prints_[0] = 0;
  for (std::size_t i = 0; i < hashes.size(); ++i) prints_[i + 1] = f = extend(f, hashes[i]);
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
