#pragma once
// What each worker's KV cache holds, from its engine's KV events (KvEventBatch): the set of cached
// blocks on the GPU tier with each block's parent (so chains can be followed), the block size the
// engine reported, and running counts of blocks stored, removed and cleared. A batch maps to the
// stream's vocabulary where one exists: blocks removed from the GPU tier are an Eviction (granularity
// block, tokens = blocks x block size); a clear is an Eviction of everything held. Other tiers
// (vLLM's and SGLang's CPU / disk offload, medium != "GPU") are counted, not held.
//
// Bounded: a worker holds at most kMaxBlocks (a 2M-token pool in 16-token blocks is 131K); blocks
// stored past that are counted as overflow, never held, so a publisher cannot fill our memory.
#include <cstdint>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/events/Event.h"
#include "core/live/KvEventBatch.h"

namespace kvscope {

class KvBlockState {
 public:
  static constexpr std::size_t kMaxBlocks = std::size_t{1} << 24;

  struct Counts {
    std::uint64_t stored = 0, removed = 0, cleared = 0;  // GPU-tier blocks, and clears
    std::uint64_t other_tiers = 0;                       // blocks stored or removed on another medium
    std::uint64_t unknown_removed = 0;                   // removals of blocks never seen stored (before we attached)
    std::uint64_t overflow = 0;                          // stored past kMaxBlocks, not held
  };

  explicit KvBlockState(int workers) : workers_(static_cast<std::size_t>(workers)) {}

  // Applies one batch of `worker`'s events (in sequence order); returns the events it maps to.
  std::vector<EventPayload> apply(WorkerId worker, const KvEventBatch& batch);
  // The blocks a worker holds now, and the tokens they cover (blocks x its block size).
  std::size_t blocks(WorkerId worker) const { return at(worker).blocks.size(); }
  std::int64_t tokens(WorkerId worker) const;
  bool holds(WorkerId worker, KvBlockKey key) const { return at(worker).blocks.contains(key); }
  // The length of the chain of held blocks ending at `key` (0 when `key` is not held).
  std::size_t chainLength(WorkerId worker, KvBlockKey key) const;
  const Counts& counts(WorkerId worker) const { return at(worker).counts; }
  // The worker's engine restarted: what it held is gone (not evicted: no event), counts kept.
  void forget(WorkerId worker) { at(worker).blocks = {}; }

 private:
  static constexpr KvBlockKey kNoParent = 0;  // a chain's first block (an engine hash of 0 is as good as none)
  struct Worker {
    absl::flat_hash_map<KvBlockKey, KvBlockKey> blocks;  // block -> parent (kNoParent for a chain's first)
    std::int64_t block_size = 0;
    Counts counts;
  };
  Worker& at(WorkerId w) { return workers_.at(static_cast<std::size_t>(w)); }
  const Worker& at(WorkerId w) const { return workers_.at(static_cast<std::size_t>(w)); }
  std::vector<Worker> workers_;
};

}  // namespace kvscope
