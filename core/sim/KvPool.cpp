#include "core/sim/KvPool.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "core/model/CommonPrefix.h"

#include "core/model/TableBytes.h"

namespace kvscope {

KvPool::KvPool(WorkerId worker, std::int64_t capacity_tokens, int block_size, EvictionGranularity granularity,
               KvEventListener* listener)
    : worker_(worker),
      capacity_(capacity_tokens),
      block_size_(block_size),
      granularity_(granularity),
      listener_(listener) {}

void KvPool::addUsed(std::int64_t delta) {
  used_ += delta;
  peak_ = std::max(peak_, used_);
  peak_ever_ = std::max(peak_ever_, used_);
  if (used_ > capacity_) {
    ++violations_;
    assert(!"KvPool: more tokens in use than the pool's capacity");
  }
  notePeak();
}

void KvPool::notePeak() { held_peak_ = std::max(held_peak_, heldTokens()); }

void KvPool::pinChain(const SessionChain& chain, int sign) {
  // Pinned tokens only tell evictable ones apart, and only block-level eviction has any: a
  // session-level pool skips the count (a lock is then O(1), not O(runs)).
  if (granularity_ != EvictionGranularity::Block) return;
  pinned_tokens_ += sign * (static_cast<std::int64_t>(refs_.pin(chain.blocks, sign)) * block_size_ + chain.tail_tokens);
  notePeak();
}

std::int64_t KvPool::matchPrefixTokens(std::span<const BlockHash> hashes) const {
  return static_cast<std::int64_t>(refs_.residentPrefix(hashes)) * block_size_;
}

std::int64_t KvPool::cachedTokensFor(SessionId session, std::span<const BlockHash> hashes,
                                     std::int64_t input_tokens) const {
  auto it = sessions_.find(session);
  if (it != sessions_.end() && (!it->second.blocks.empty() || it->second.tail_tokens > 0)) {
    const auto& chain = it->second.blocks;
    const std::size_t m = commonPrefix(chain, hashes);
    if (m == chain.size()) {
      // The prompt extends the session's chain: the whole committed prefix (with the unhashed tail
      // of the last output) is reusable, as a streaming session's KV is.
      const std::int64_t committed = static_cast<std::int64_t>(chain.size()) * block_size_ + it->second.tail_tokens;
      return std::min(input_tokens, committed);
    }
  }
  return std::min(input_tokens, matchPrefixTokens(hashes));
}

bool KvPool::hasSession(SessionId session) const {
  auto it = sessions_.find(session);
  return it != sessions_.end() && (!it->second.blocks.empty() || it->second.tail_tokens > 0);
}

int KvPool::residentSessions() const {
  int n = 0;
  for (const auto& [id, chain] : sessions_) n += !chain.blocks.empty() || chain.tail_tokens > 0;
  return n;
}

std::int64_t KvPool::sessionTokens(SessionId session) const {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return 0;
  return static_cast<std::int64_t>(it->second.blocks.size()) * block_size_ + it->second.tail_tokens;
}

void KvPool::touch(SessionId session, SessionChain& chain) {
  lru_.erase(chain.lru);
  chain.lru = lru_.insert(lru_.end(), session);
}

void KvPool::cutChain(SessionChain& chain, std::size_t keep) {
  const std::size_t freed = refs_.drop(chain.blocks, keep);
  addUsed(-static_cast<std::int64_t>(freed) * block_size_);
  if (listener_ && freed > 0) listener_->onChainRemoved(worker_, chain.blocks, chain.blocks.size() - freed);
  chain.blocks.resize(keep);
}

std::int64_t KvPool::trimChain(SessionChain& chain, std::int64_t want_tokens) {
  const std::int64_t from_tail = std::min(chain.tail_tokens, want_tokens);
  chain.tail_tokens -= from_tail;
  addUsed(-from_tail);
  const std::int64_t short_by = want_tokens - from_tail;
  if (short_by <= 0 || chain.blocks.empty()) return from_tail;
  // Blocks go from the end, and only the chain's own ones (its last) free anything: as many as the
  // request needs, or, when those are not enough, the whole chain (a shared block stays resident
  // for its other sessions).
  const std::size_t own = refs_.exclusiveTail(chain.blocks);
  const auto need = static_cast<std::size_t>(short_by / block_size_ + (short_by % block_size_ != 0));
  const std::int64_t before = used_;
  cutChain(chain, need <= own ? chain.blocks.size() - need : 0);
  return from_tail + before - used_;
}

KvPool::EvictionReport KvPool::makeRoom(std::int64_t tokens, std::int64_t limit) {
  EvictionReport report;
  std::int64_t need = used_ + tokens - limit;
  auto it = lru_.begin();
  while (need > 0 && it != lru_.end()) {
    const SessionId sid = *it;
    auto& chain = sessions_.at(sid);
    if (chain.locks > 0) {
      ++it;
      continue;
    }
    const std::int64_t want =
        granularity_ == EvictionGranularity::Session ? std::numeric_limits<std::int64_t>::max() : need;
    const std::int64_t freed = trimChain(chain, want);
    report.tokens_freed += freed;
    ++report.sessions_hit;
    report.session = sid;
    need -= freed;
    // One eviction event per session hit, so "tokens freed per eviction" reads the same for both
    // granularities: a whole session tail, or the few leaves the allocation needed.
    if (freed > 0 && on_eviction_) on_eviction_(EvictionReport{freed, 1, sid});
    if (chain.blocks.empty() && chain.tail_tokens == 0) {
      it = lru_.erase(it);
      sessions_.erase(sid);
    } else {
      ++it;
    }
  }
  if (report.sessions_hit != 1) report.session = 0;
  return report;
}

KvPool::EvictionReport KvPool::trimOneSession() {
  EvictionReport report;
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    const SessionId sid = *it;
    if (sessions_.at(sid).locks > 0) continue;
    report.tokens_freed = release(sid);
    report.sessions_hit = 1;
    report.session = sid;
    if (report.tokens_freed > 0 && on_eviction_) on_eviction_(report);
    break;
  }
  return report;
}

void KvPool::reserve(std::int64_t tokens) {
  reserved_ += tokens;
  addUsed(tokens);
}
void KvPool::unreserve(std::int64_t tokens) {
  reserved_ -= tokens;
  addUsed(-tokens);
}

void KvPool::lock(SessionId session) {
  auto [it, inserted] = sessions_.try_emplace(session);
  if (inserted) it->second.lru = lru_.insert(lru_.end(), session);
  if (it->second.locks++ == 0) pinChain(it->second, +1);
  touch(session, it->second);
}

void KvPool::unlock(SessionId session) {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  if (it->second.locks > 0 && --it->second.locks == 0) pinChain(it->second, -1);
  // A chain that never committed anything (the turn failed) leaves nothing behind.
  if (it->second.locks == 0 && it->second.blocks.empty() && it->second.tail_tokens == 0) {
    lru_.erase(it->second.lru);
    sessions_.erase(it);
  }
}

void KvPool::commit(SessionId session, std::span<const BlockHash> prompt, std::int64_t committed_tokens) {
  auto [it, inserted] = sessions_.try_emplace(session);
  SessionChain& chain = it->second;
  if (inserted) chain.lru = lru_.insert(lru_.end(), session);
  const std::size_t m = commonPrefix(chain.blocks, prompt);
  const bool locked = chain.locks > 0;
  if (locked) pinChain(chain, -1);  // re-pinned below with the new chain
  if (m < chain.blocks.size()) cutChain(chain, m);
  addUsed(-chain.tail_tokens);  // the old tail goes before the new blocks come (no transient overshoot)
  chain.tail_tokens = 0;
  chain.blocks.reserve(prompt.size());  // exactly: a chain grows once per turn, doubling would waste up to half
  chain.blocks.insert(chain.blocks.end(), prompt.begin() + static_cast<std::ptrdiff_t>(m), prompt.end());
  addUsed(static_cast<std::int64_t>(refs_.add(chain.blocks, m)) * block_size_);
  if (listener_ && prompt.size() > m) listener_->onChainStored(worker_, session, prompt, m);
  const std::int64_t hashed = static_cast<std::int64_t>(prompt.size()) * block_size_;
  chain.tail_tokens = std::max<std::int64_t>(0, committed_tokens - hashed);
  addUsed(chain.tail_tokens);
  if (locked) pinChain(chain, +1);
  touch(session, chain);
}

void KvPool::commitWithin(SessionId session, std::span<const BlockHash> prompt, std::int64_t committed_tokens) {
  // Most turns fit as they are. A bound on the growth that looks no block up (every block past the
  // session's own chain counted as new, nothing counted as freed) settles those without probing
  // each block twice (here and in commit); only a turn the bound does not fit is measured exactly.
  std::size_t m = 0;
  if (auto it = sessions_.find(session); it != sessions_.end()) m = commonPrefix(it->second.blocks, prompt);
  const std::int64_t hashed = static_cast<std::int64_t>(prompt.size()) * block_size_;
  const std::int64_t bound =
      static_cast<std::int64_t>(prompt.size() - m) * block_size_ + std::max<std::int64_t>(0, committed_tokens - hashed);
  if (fits(bound, capacity_)) {
    commit(session, prompt, committed_tokens);
    return;
  }
  std::int64_t growth = commitGrowth(session, prompt, committed_tokens);
  if (growth > 0 && !fits(growth, capacity_)) {
    makeRoom(growth, capacity_);
    growth = commitGrowth(session, prompt, committed_tokens);
  }
  while (growth > 0 && !fits(growth, capacity_) && committed_tokens > 0) {
    committed_tokens = std::max<std::int64_t>(0, committed_tokens - (used_ + growth - capacity_));
    prompt = prompt.first(std::min(prompt.size(), static_cast<std::size_t>(committed_tokens / block_size_)));
    growth = commitGrowth(session, prompt, committed_tokens);
  }
  commit(session, prompt, committed_tokens);
}

std::int64_t KvPool::commitGrowth(SessionId session, std::span<const BlockHash> prompt,
                                  std::int64_t committed_tokens) const {
  std::int64_t growth = 0;
  std::size_t m = 0;
  if (auto it = sessions_.find(session); it != sessions_.end()) {
    const SessionChain& chain = it->second;
    m = commonPrefix(chain.blocks, prompt);
    // The chain's own blocks are its last ones: those past m leave the pool.
    growth -=
        static_cast<std::int64_t>(std::min(refs_.exclusiveTail(chain.blocks), chain.blocks.size() - m)) * block_size_;
    growth -= chain.tail_tokens;
  }
  // Resident blocks form a prefix of the prompt, and its first m are the chain's.
  growth += static_cast<std::int64_t>(prompt.size() - std::max(m, refs_.residentPrefix(prompt))) * block_size_;
  const std::int64_t hashed = static_cast<std::int64_t>(prompt.size()) * block_size_;
  return growth + std::max<std::int64_t>(0, committed_tokens - hashed);
}

std::int64_t KvPool::release(SessionId session) {
  auto it = sessions_.find(session);
  if (it == sessions_.end() || it->second.locks > 0) return 0;  // a running request pins its chain
  const std::int64_t freed = trimChain(it->second, std::numeric_limits<std::int64_t>::max());
  lru_.erase(it->second.lru);
  sessions_.erase(it);
  return freed;
}

void KvPool::clear() {
  refs_.clear();
  sessions_.clear();
  lru_.clear();
  used_ = reserved_ = pinned_tokens_ =
      0;  // the requests holding reservations die with the worker (the peak stays reported)
  if (listener_) listener_->onWorkerCleared(worker_);
}

std::size_t KvPool::memoryBytes() const {
  // A list node: the value, two links and the allocator's header.
  std::size_t n =
      refs_.memoryBytes() + flatTableBytes(sessions_) + lru_.size() * (sizeof(SessionId) + 2 * sizeof(void*) + 8);
  for (const auto& [id, chain] : sessions_) n += chain.blocks.capacity() * sizeof(BlockHash);
  return n;
}

}  // namespace kvscope
