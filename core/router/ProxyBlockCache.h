#pragma once
// What the lab's proxy (agentic-kvc scripts/cache_aware_proxy.py) believes each instance has
// cached: per instance an LRU set of block hashes of BLOCK_SIZE = 512 tokens, filled by the proxy
// itself with the prompts it sends there, never told of the engine's own evictions.
// estimate_cache_hit() is the longest prefix of the prompt's blocks in the set, stopping at the
// first miss, and a hit moves the block to the recent end ("move-to-end on hit", the lab's
// tests/test_proxy_pick.py @ 0701f84c). The lab's policies read cache hits from here when the
// knob cache_view is proxy-lru; with exact they read the engine's state (the prefix index), the
// ablation the lab wanted and never ran.
//
// The proxy hashes token ids in 512-token blocks. The router's prompts are chains of smaller
// blocks; a chained hash at block i identifies the whole prefix through it, so proxy block j is
// the router's block (j + 1) * k - 1, k = proxy_block_tokens / block_size rounded: exact when the
// router's block size divides the proxy's (16 into 512, vLLM's), else blocks of k * block_size
// tokens (21 x 24 = 504 for SGLang's 24).
#include <cstdint>
#include <span>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"

namespace kvscope {

class ProxyBlockCache {
 public:
  explicit ProxyBlockCache(int num_workers) : workers_(static_cast<std::size_t>(num_workers)) {}

  // Router blocks per proxy block for these sizes (at least 1).
  static int stride(int proxy_block_tokens, int block_size);
  // Tokens in one proxy block: stride x block_size.
  static std::int64_t proxyBlockTokens(int proxy_block_tokens, int block_size);

  // Leading proxy blocks of the prompt cached on `worker`, touching each hit (the proxy's
  // estimate_cache_hit); `hashes` are the router's blocks.
  std::int64_t prefixHit(WorkerId worker, std::span<const BlockHash> hashes, int stride);
  // The proxy sent the prompt to `worker`: its blocks become the most recent, the least recent
  // go past `capacity` blocks.
  void insert(WorkerId worker, std::span<const BlockHash> hashes, int stride, std::size_t capacity);
  std::size_t size(WorkerId worker) const { return workers_[static_cast<std::size_t>(worker)].where.size(); }
  // Drops every set (the block size changed, so the old keys mean nothing).
  void clear();

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Node {
    BlockHash hash = 0;
    std::uint32_t prev = kNone, next = kNone;  // prev: older, next: newer
  };
  struct Lru {
    absl::flat_hash_map<BlockHash, std::uint32_t> where;
    std::vector<Node> nodes;
    std::vector<std::uint32_t> free;
    std::uint32_t oldest = kNone, newest = kNone;
  };
  static void unlink(Lru& lru, std::uint32_t n);
  static void pushNewest(Lru& lru, std::uint32_t n);

  std::vector<Lru> workers_;
};

}  // namespace kvscope
