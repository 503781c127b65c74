#pragma once
// Block hashes computed from token ids, the way NVIDIA Dynamo's KV router computes them
// (ai-dynamo/dynamo lib/llm/src/kv_router/protocols.rs @ 0dad7c5188965b617af41bdbf2004aeb8ac5505d:
// compute_block_hash_for_seq, compute_seq_hash_for_block): a block's local hash is XXH3-64 with seed
// 1337 over its token ids as little-endian u32; its sequence hash is the local hash for a prompt's
// first block, else XXH3-64 (seed 1337) over [parent sequence hash, local hash] as little-endian
// u64. Only full blocks are hashed. The engines' own block hashes differ (vLLM's sha256 or Python
// hash with its own seed, SGLang's): a router and a KV event feed that both hash the tokens this way
// agree on every block, whatever engine holds it. No LoRA, multimodal or namespace salt (Dynamo mixes
// those into the seed): prompts that differ only in those cannot be told apart here.
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/Ids.h"

namespace kvscope {

constexpr std::uint64_t kTokenHashSeed = 1337;

std::uint64_t localBlockHash(std::span<const std::uint32_t> tokens);
BlockHash nextSequenceHash(BlockHash parent, std::uint64_t local);
// The sequence hashes of `tokens`' full blocks of `block_size` tokens (none when block_size < 1).
std::vector<BlockHash> tokenBlockHashes(std::span<const std::uint32_t> tokens, int block_size);

}  // namespace kvscope
