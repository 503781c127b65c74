#pragma once
// One batch of an engine's KV cache events, as vLLM (vllm/distributed/kv_events.py) and SGLang
// (python/sglang/srt/disaggregation/kv_events.py) publish them over ZMQ: which blocks a worker now
// holds (BlockStored, with their chain and, when sent, their token ids), which it dropped
// (BlockRemoved) and when it dropped everything (AllBlocksCleared). Engine-neutral: KvEventDecoder
// reads every wire form in use into this.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kvscope {

// An engine's block hash as a 64-bit key. Integer hashes (SGLang, vLLM before its sha256 hashes)
// are taken as they are (a negative Python int as its two's complement); byte-string hashes (vLLM's
// sha256 digests) by their first 8 bytes, big-endian: a digest's bytes are uniform, so 64 of them
// are as good a key as the whole for a set of blocks. It is the engine's hash, not the router's.
using KvBlockKey = std::uint64_t;

struct KvBlockStored {
  std::vector<KvBlockKey> blocks;         // in chain order
  std::optional<KvBlockKey> parent;       // the block before the first one, when it has one
  std::vector<std::int64_t> token_ids;    // the blocks' tokens, when the engine sent them
  std::int64_t block_size = 0;            // tokens per block
  std::string medium;                     // "GPU", "CPU", ... ("" when not sent)
  std::string lora_name;                  // "" when none
  std::optional<std::int64_t> group_idx;  // hybrid models: the KV cache group
};

struct KvBlockRemoved {
  std::vector<KvBlockKey> blocks;
  std::string medium;
  std::optional<std::int64_t> group_idx;
};

struct KvAllBlocksCleared {};

using KvCacheEvent = std::variant<KvBlockStored, KvBlockRemoved, KvAllBlocksCleared>;

struct KvEventBatch {
  double ts = 0;  // the engine's wall clock, seconds since 1970
  std::vector<KvCacheEvent> events;
  std::optional<std::int64_t> dp_rank;     // data_parallel_rank (vLLM) or attn_dp_rank (SGLang), when sent
  std::vector<std::string> unknown_kinds;  // events of a kind this reader does not know, skipped
};

}  // namespace kvscope
