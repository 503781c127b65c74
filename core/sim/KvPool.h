#pragma once
// One worker's KV pool, in tokens, at block granularity.
//
// Each resident session holds a chain: the block hashes of its committed prompt (shared boilerplate
// blocks are reference-counted across sessions, so they occupy the pool once) plus an unhashed tail
// (the last turn's output, which the next turn's prompt will cover). Requests in flight hold
// reserved tokens until their turn commits into the session's chain.
//
// Two eviction granularities (ARCHITECTURE.md D4):
//  - Session: `release_session` frees an idle session's whole chain at once (the lab's today).
//  - Block:   radix LRU trims 24-token leaves from the least recently used idle chains, only as many
//             as the allocation needs (the planned fix).
#include <cstdint>
#include <functional>
#include <list>
#include <span>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/events/Event.h"
#include "core/events/KvEventListener.h"
#include "core/model/Ids.h"
#include "core/sim/ChainRefs.h"

namespace kvscope {

class KvPool {
 public:
  struct EvictionReport {
    std::int64_t tokens_freed = 0;
    std::int32_t sessions_hit = 0;
    SessionId session = 0;  // the session hit, when exactly one was
  };
  using EvictionCallback = std::function<void(const EvictionReport&)>;

  KvPool(WorkerId worker, std::int64_t capacity_tokens, int block_size, EvictionGranularity granularity,
         KvEventListener* listener);

  std::int64_t capacity() const { return capacity_; }
  std::int64_t used() const { return used_; }
  std::int64_t freeTokens() const { return capacity_ - used_; }
  std::int64_t peakSinceReset() const { return peak_; }
  // The invariant every change is checked against: a pool never holds more than its capacity (a
  // real allocator cannot hand out slots it does not have). A violation is a logic error of the
  // simulator: an assertion in debug builds, and counted (and reported in the snapshots) always.
  std::int64_t peakEver() const { return peak_ever_; }
  std::int64_t capacityViolations() const { return violations_; }
  void resetPeak() {
    peak_ = used_;
    held_peak_ = heldTokens();
  }
  // What SGLang's scheduler would report for this pool: upstream's
  // num_used_tokens is max_total - available - evictable, so the radix cache's unlocked entries
  // are not "used". With block-level eviction an idle session's turns sit in the radix cache and
  // are evictable; with session-level eviction they are held by the streaming session (neither
  // free nor evictable, so inside num_used_tokens) until release_session frees them.
  std::int64_t evictableTokens() const {
    return granularity_ == EvictionGranularity::Block ? used_ - reserved_ - pinned_tokens_ : 0;
  }
  std::int64_t heldTokens() const { return used_ - evictableTokens(); }  // upstream's num_used_tokens
  // PrefillAdder's `available_size() + evictable_size()`: room an admission may count on.
  std::int64_t availableTokens() const { return freeTokens() + evictableTokens(); }
  std::int64_t heldPeakSinceReset() const { return held_peak_; }
  int blockSize() const { return block_size_; }
  EvictionGranularity granularity() const { return granularity_; }

  // Tokens of `hashes`' prefix already resident (blocks * block_size).
  std::int64_t matchPrefixTokens(std::span<const BlockHash> hashes) const;
  // Tokens this session can reuse for a prompt: its resident chain when the prompt extends it
  // (including the unhashed tail), else the plain prefix match.
  std::int64_t cachedTokensFor(SessionId session, std::span<const BlockHash> hashes, std::int64_t input_tokens) const;
  // A session is resident when it has committed KV here (a lock alone, for a turn in flight, is not).
  bool hasSession(SessionId session) const;
  std::int64_t sessionTokens(SessionId session) const;  // committed prefix length, 0 if not resident
  int residentSessions() const;

  // Frees space so that `tokens` more fit under `limit` used tokens, by this pool's granularity,
  // never touching locked sessions. Returns what it freed (also reported through onEviction).
  EvictionReport makeRoom(std::int64_t tokens, std::int64_t limit);
  // Session-level trim of exactly one idle session (the LRU one), as the prealloc queue does.
  EvictionReport trimOneSession();
  bool fits(std::int64_t tokens, std::int64_t limit) const { return used_ + tokens <= limit; }

  // In-flight reservations (prefill of uncached tokens, decode growth).
  void reserve(std::int64_t tokens);
  void unreserve(std::int64_t tokens);

  // A running request pins its session's chain.
  void lock(SessionId session);
  void unlock(SessionId session);

  // A turn finished: the session's chain now covers `prompt`'s blocks and, unhashed after them,
  // the rest of `committed_tokens` (the prompt's last partial block and the output). Replaces the
  // previous chain and reports the newly referenced blocks to the listener.
  void commit(SessionId session, std::span<const BlockHash> prompt, std::int64_t committed_tokens);
  // `commit`, making room for what it adds and, when even eviction leaves too little, keeping fewer
  // of the turn's tokens (from the end): the pool never goes over its capacity.
  void commitWithin(SessionId session, std::span<const BlockHash> prompt, std::int64_t committed_tokens);
  // Tokens `commit` would add to the pool (negative when it frees some).
  std::int64_t commitGrowth(SessionId session, std::span<const BlockHash> prompt, std::int64_t committed_tokens) const;
  // Drops a session's chain (session-level release). Returns the tokens freed.
  std::int64_t release(SessionId session);
  // Crash: everything gone.
  void clear();

  void setEvictionCallback(EvictionCallback cb) { on_eviction_ = std::move(cb); }

  // Every resident session's chain, least recently used first: fn(session, blocks, tail tokens).
  template <class Fn>
  void forEachSession(Fn&& fn) const {
    for (SessionId s : lru_) {
      const SessionChain& c = sessions_.at(s);
      if (!c.blocks.empty() || c.tail_tokens > 0) fn(s, std::span<const BlockHash>(c.blocks), c.tail_tokens);
    }
  }

  // Distinct resident blocks, and the bytes this pool's bookkeeping holds (tables, chains, LRU):
  // bench_cluster_scale's bytes per resident block.
  std::size_t residentBlocks() const { return refs_.blocks(); }
  std::size_t memoryBytes() const;

 private:
  struct SessionChain {
    std::vector<BlockHash> blocks;
    std::int64_t tail_tokens = 0;  // unhashed tokens after the last block
    int locks = 0;
    std::list<SessionId>::iterator lru;  // position in lru_ (front = least recently used)
  };

  void touch(SessionId session, SessionChain& chain);
  // The chain no longer holds its blocks from `keep` on: the freed ones leave the pool and are
  // reported (they are the chain's last ones).
  void cutChain(SessionChain& chain, std::size_t keep);
  // Pops tokens from the end of a chain; returns tokens actually freed from the pool.
  std::int64_t trimChain(SessionChain& chain, std::int64_t want_tokens);
  void addUsed(std::int64_t delta);
  // A locked chain's blocks and tail are pinned (not evictable); a block shared by several locked
  // chains is pinned once.
  void pinChain(const SessionChain& chain, int sign);
  void notePeak();

  WorkerId worker_;
  std::int64_t capacity_;
  int block_size_;
  EvictionGranularity granularity_;
  KvEventListener* listener_;
  EvictionCallback on_eviction_;

  std::int64_t used_ = 0;
  std::int64_t peak_ = 0;
  std::int64_t reserved_ = 0;       // in-flight reservations (always locked)
  std::int64_t pinned_tokens_ = 0;  // blocks and tails of locked chains, each block once
  std::int64_t held_peak_ = 0;
  std::int64_t peak_ever_ = 0;
  std::int64_t violations_ = 0;
  ChainRefs refs_;  // the resident sessions' chains: which blocks are resident, and pinned
  absl::flat_hash_map<SessionId, SessionChain> sessions_;
  std::list<SessionId> lru_;
};

}  // namespace kvscope
