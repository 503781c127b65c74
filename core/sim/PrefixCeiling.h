#pragma once
// What an unbounded prefix cache would hit, request by request: the longest prefix of a prompt that
// an earlier request sent, among the same session's requests (intra) or any session's (any). The
// lab's ceiling (gahow/agentic-kvc scripts/compute_apc_upper_bound.py @ b790206: "block i hits the
// cache iff hash_ids[0..i] matches some previously seen request's hash_ids[0..i]", an infinite
// cache, rows in time order) at the twin's block size, in dispatch order.
//
// The seen prompts are kept as paths (ChainTree runs: 8 bytes a block plus a node per fork), which
// is the lab's own definition (a block hits when its whole prefix was seen), so a turn costs a node
// lookup per run on its path, one sequential compare, and an append of its new blocks. A session's
// own tree is dropped when the session ends; the any-session tree keeps every distinct path of the
// run (an infinite cache: what it costs is its size).
#include <cstdint>
#include <span>

#include <absl/container/flat_hash_map.h>

#include "core/model/ChainTree.h"
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
  Hit observe(SessionId session, std::span<const BlockHash> hashes, std::int64_t input_tokens,
              std::int64_t output_tokens);
  void endSession(SessionId session) { sessions_.erase(session); }
  std::size_t memoryBytes() const;

 private:
  struct Seen {};  // a path is all the tree records
  using Paths = ChainTree<Seen>;
  // How many leading blocks of `hashes` are a seen path; then the path is seen whole.
  static std::int64_t see(Paths& seen, std::span<const BlockHash> hashes);

  struct Session {
    Paths seen;
    std::int64_t last_blocks = 0;  // the previous prompt's blocks and its prompt + output tokens
    std::int64_t last_tokens = 0;
  };
  int block_size_;
  Paths any_;
  absl::flat_hash_map<SessionId, Session> sessions_;
};

}  // namespace kvscope
