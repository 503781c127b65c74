#pragma once
// Expands a PromptLayout into block hashes of the scenario's block size.
//
// Scenario block j covers tokens [j*B, (j+1)*B). Its prefix is fully determined by the trace block
// that holds its last token, so its hash is mix(session_scope, source_hashes[k], j) with
// k = ((j+1)*B - 1) / source_block_size. The same rule splits 512-token Mooncake blocks into 24-token
// ones and merges 64-token ones into larger blocks, deterministically, and keeps "equal hashes mean
// equal prefixes": two prompts share block j only if they share the trace block covering its end.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/model/Ids.h"
#include "core/model/Prompt.h"

namespace kvscope {

// A strong 64-bit mix (splitmix64 finaliser) used to derive block hashes from scopes and positions.
constexpr std::uint64_t mixHash(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a: a string's hash that is the same on every platform and standard library (std::hash is
// not), so a trace maps to the same block hashes wherever it is replayed.
constexpr std::uint64_t stableHash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// Appends the hashes of every full block of `prompt` to `out` (cleared first).
void expandBlockHashes(const PromptLayout& prompt, int block_size, std::vector<BlockHash>& out);

// Number of full blocks of `tokens` tokens.
inline int fullBlocks(std::int64_t tokens, int block_size) { return static_cast<int>(tokens / block_size); }

}  // namespace kvscope
