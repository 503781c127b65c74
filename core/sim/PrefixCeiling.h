#pragma once
// What an unbounded prefix cache would hit, request by request: the longest prefix of a prompt that
// an earlier request sent, among the same session's requests (intra) or any session's (any). The
// lab's ceiling (gahow/agentic-kvc scripts/compute_apc_upper_bound.py @ b790206: "block i hits the
// cache iff hash_ids[0..i] matches some previously seen request's hash_ids[0..i]", an infinite
// cache, rows in time order) at the twin's block size, in dispatch order.
//
// Block hashes are prefix-chained, so a set of every block seen holds, with any block, every block
// before it in its chain: the longest seen prefix is found by bisection (log n lookups) and only
// the blocks past it are inserted, so a turn costs its new blocks. A session's own set is dropped
// when the session ends; the any-session set keeps every distinct block of the run (about 40 bytes
// each: what this costs).
//
// An unbounded cache also holds what the engine generated: a prompt that extends the session's
// previous one (it holds all of that prompt's blocks) may hit the previous prompt and its output,
// as an engine's session cache does with the previous turn's unhashed tail.
#include <cstdint>
#include <span>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "core/model/Ids.h"

namespace kvscope {

class PrefixCeiling {
 public:
  explicit PrefixCeiling(int block_size) : block_size_(block_size) {}
  struct Hit {
    std::int64_t intra_tokens = 0;
    std::int64_t any_tokens = 0;
  };
  // The request's ceilings in tokens, then its blocks (and its output, for the session's next
  // prompt) count as seen.
  Hit observe(SessionId session, std::span<const BlockHash> hashes, std::int64_t input_tokens, std::int64_t output_tokens);
  void endSession(SessionId session) { sessions_.erase(session); }
  std::size_t memoryBytes() const;

 private:
  using Set = absl::flat_hash_set<BlockHash>;
  static std::int64_t seenPrefix(const Set& seen, std::span<const BlockHash> hashes);
  static void insertFrom(Set& seen, std::span<const BlockHash> hashes, std::int64_t from);

  struct Session {
    Set seen;
    std::int64_t last_blocks = 0;  // the previous prompt's blocks and its prompt + output tokens
    std::int64_t last_tokens = 0;
  };
  int block_size_;
  Set any_;
  absl::flat_hash_map<SessionId, Session> sessions_;
};

}  // namespace kvscope
