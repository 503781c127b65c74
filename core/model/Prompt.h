#pragma once
// What a request's prompt looks like to the KV cache: its length and where its blocks come from.
// Block hashes are not stored per request; they are expanded on demand in the scenario's block size
// (see BlockChain.h), so a workload of thousands of 100K-token prompts stays small in memory.
#include <cstdint>
#include <vector>

namespace kvscope {

struct PromptLayout {
  std::int32_t input_tokens = 0;
  // The first `shared_prefix_tokens` tokens are boilerplate (system prompt + tool schema) that map to
  // one global chain keyed by `shared_scope`, identical across every session that uses that scope.
  std::int32_t shared_prefix_tokens = 0;
  std::uint64_t shared_scope = 0;
  // Everything after the boilerplate is keyed by `session_scope` (the same across a session's turns,
  // so a conversation's growing prefix keeps its hashes from turn to turn).
  std::uint64_t session_scope = 0;
  // Block ids as the trace published them, in `source_block_size` tokens each (empty for synthetic
  // prompts and traces without hashes). Equal ids at the same position mean equal prefixes.
  std::int32_t source_block_size = 0;
  std::vector<std::uint64_t> source_hashes;
  // Tokens past the trace's hashed range are unique to this request.
  std::uint64_t unique_scope = 0;
};

}  // namespace kvscope
