#pragma once
// What Dynamo's KV router knows of each worker's load: the requests it routed
// there and has not seen finish, as lib/llm/src/kv_router/sequence.rs (ActiveSequences) keeps them
// - the distinct blocks of their prompts (a block shared by two requests counts once) and the
// prompt tokens still to prefill (a request's new tokens, isl - overlap x block_size, until its
// prefill completes). Not the worker's resident KV: a finished request's blocks leave the count
// even though the engine keeps them cached.
//
// The lab's proxy (agentic-kvc scripts/cache_aware_proxy.py) keeps the same kind of counters per
// instance, and they come from here too: num_requests (routed, not finished), ongoing_tokens (their
// input tokens), pending_prefill_tokens (their uncached tokens until the first token) and
// ongoing_decode_tokens (the input tokens of those past their first token).
//
// Counting the distinct blocks costs a map update per prompt block per request, and only a
// policy that reads them (dynamo-kv) needs it: the router turns counting on with that policy. The
// requests are kept either way, so counting can start mid-run from the requests in flight.
#include <span>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"

namespace kvscope {

class ActiveSequences {
 public:
  explicit ActiveSequences(int num_workers) : workers_(static_cast<std::size_t>(num_workers)) {}

  // A request routed to `worker` (moved there if it was tracked elsewhere).
  void add(RequestId request, WorkerId worker, std::span<const BlockHash> hashes, std::int64_t prefill_tokens,
           std::int64_t input_tokens = 0);
  void prefillDone(RequestId request);
  void free(RequestId request);
  void clearWorker(WorkerId worker);
  void compact();  // shrinks the tables to what they hold (flat tables keep their size after erasing)
  // Off: activeBlocks() and newBlocks() are not kept (0 and every block); the rest is.
  void setCountingBlocks(bool on);
  bool countingBlocks() const { return counting_; }

  std::int64_t activeBlocks(WorkerId w) const { return static_cast<std::int64_t>(at(w).blocks.size()); }
  std::int64_t activeTokens(WorkerId w) const { return at(w).prefill_tokens; }  // prompt tokens still to prefill
  std::int32_t activeRequests(WorkerId w) const { return at(w).requests; }
  std::int64_t inputTokens(WorkerId w) const { return at(w).input_tokens; }    // the proxy's ongoing_tokens
  std::int64_t decodeTokens(WorkerId w) const { return at(w).decode_tokens; }  // its ongoing_decode_tokens
  // Blocks of `hashes` this worker's tracked requests do not hold yet (sequence.rs new_blocks).
  std::int64_t newBlocks(WorkerId w, std::span<const BlockHash> hashes) const;
  // The longest leading run of `hashes` that one of this worker's tracked requests shares: a prefix
  // the router has sent there and not yet seen land (what the lab's KVC router counts as overlap
  // from its own routing, before the engine reports the blocks stored). Compares the prompts of the
  // requests in flight there, each up to its first difference (no per-block table to keep).
  std::int64_t prefixBlocks(WorkerId w, std::span<const BlockHash> hashes) const;

 private:
  struct Worker {
    absl::flat_hash_map<BlockHash, std::int32_t> blocks;  // block -> tracked requests holding it
    std::int64_t prefill_tokens = 0;
    std::int64_t input_tokens = 0;
    std::int64_t decode_tokens = 0;
    std::int32_t requests = 0;
    std::vector<RequestId> ids;  // the requests tracked here (prefixBlocks walks them)
  };
  struct Tracked {
    WorkerId worker = kNoWorker;
    std::vector<BlockHash> hashes;
    std::int64_t prefill_tokens = 0;  // 0 once prefilled
    std::int64_t input_tokens = 0;
    bool prefilled = false;
    std::uint32_t slot = 0;  // position in its worker's `ids`
  };
  const Worker& at(WorkerId w) const { return workers_[static_cast<std::size_t>(w)]; }

  void count(const Tracked& t, int sign);

  bool counting_ = true;
  std::vector<Worker> workers_;
  absl::flat_hash_map<RequestId, Tracked> requests_;
};

}  // namespace kvscope
