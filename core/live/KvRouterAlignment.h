#pragma once
// An engine's KV events in the router's terms, so `cache_view = exact` routes on what the engines
// really hold. The engines' block hashes are their own (vLLM: sha256 or Python's hash over its
// token blocks with a per-process seed; SGLang: its own), never the router's. As Dynamo's KV router
// does, the blocks are matched by their tokens instead: a BlockStored that carries token ids is
// hashed with TokenBlockHash (the same function the Router service applies to a RouteRequest's
// token_ids), chained from its parent's hash, and each engine block is remembered under that hash so
// its removal can be told to the router too.
//
// What cannot be matched, and is counted per worker instead (docs/ARCHITECTURE.md, "hash alignment"):
// a BlockStored without token ids (older SGLang), blocks of another size than the router's
// block_size, blocks whose parent was stored before KVScope attached (its tokens are unknown, so
// the chain cannot be continued), LoRA blocks (no adapter salt in the router's hashes), and blocks
// on other tiers (CPU, disk). Bounded like KvBlockState.
#include <cstdint>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/events/Event.h"
#include "core/live/KvEventBatch.h"

namespace kvscope {

class KvRouterAlignment {
 public:
  static constexpr std::size_t kMaxBlocks = std::size_t{1} << 24;

  struct Counts {
    std::uint64_t aligned = 0;         // blocks given to the router
    std::uint64_t no_tokens = 0;       // stored without token ids
    std::uint64_t other_size = 0;      // block size differs from the router's
    std::uint64_t unknown_parent = 0;  // their chain starts before KVScope attached
    std::uint64_t lora = 0;            // stored under a LoRA adapter
    std::uint64_t overflow = 0;        // past kMaxBlocks
    std::int64_t last_block_size = 0;  // the engine's block size, as its last BlockStored said
  };
  struct Update {
    std::vector<BlockHash> stored, removed;  // the router's hashes
  };

  KvRouterAlignment(int workers, int router_block_size)
      : workers_(static_cast<std::size_t>(workers)), block_size_(router_block_size) {}

  Update apply(WorkerId worker, const KvEventBatch& batch);
  // The engine restarted: its blocks are gone; returns their router hashes.
  std::vector<BlockHash> forget(WorkerId worker);
  const Counts& counts(WorkerId worker) const { return workers_.at(static_cast<std::size_t>(worker)).counts; }
  int blockSize() const { return block_size_; }

 private:
  struct Worker {
    absl::flat_hash_map<KvBlockKey, BlockHash> hashes;  // engine block -> the router's hash
    Counts counts;
  };
  std::vector<Worker> workers_;
  int block_size_;
};

}  // namespace kvscope
