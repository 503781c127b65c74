#pragma once
// A serving worker's scheduler state (a decode worker, or an instance in a non-disaggregated
// cluster): its KV pool, the local prefill queue, the continuous batch and the prealloc queue.
#include <deque>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/sim/KvPool.h"
#include "core/sim/MooncakeLink.h"
#include "core/sim/NewTokenRatio.h"
#include "core/sim/PrefillWorker.h"

namespace kvscope {

struct RunningSlot {
  RequestId id = 0;  // 0 = left the batch during this iteration (removed at its end)
  std::int32_t remaining = 0;
  std::int32_t generated = 0;
  std::int32_t kv = 0;  // decode-growth tokens reserved so far (one per started decode step)
};

struct DecodeWorker {
  DecodeWorker(WorkerId w, std::int64_t capacity, int block_size, EvictionGranularity g, KvEventListener* l)
      : id(w), pool(w, capacity, block_size, g, l) {}

  WorkerId id;
  KvPool pool;
  bool alive = true;

  std::deque<RequestId> prefill_queue;               // admitted; uncached tokens to prefill here
  std::vector<RunningSlot> running;                  // the continuous batch
  std::vector<RunningSlot> joining;                  // first token produced this iteration; decode from the next
  std::deque<RequestId> space_waiters;               // waiting for room in the pool (seeds, local requests)
  std::deque<RequestId> seed_slot_waiters;           // router-side: waiting for the pending-seed budget
  std::deque<RequestId> retracted;                   // retracted from the batch, waiting for room to resume
  absl::flat_hash_map<SessionId, int> in_scheduler;  // requests per session not yet committed here

  std::int64_t context_tokens = 0;          // sum of context lengths in the batch
  std::int64_t pending_prefill_tokens = 0;  // local prefill still queued
  std::int32_t pending_seeds = 0;
  NewTokenRatio new_token_ratio;
  std::int64_t retractions = 0;  // requests retracted so far (upstream's num_retracted_requests_total)

  bool iterating = false;
  std::int32_t epoch = 0;      // bumped by a crash so stale iteration events are ignored
  SimTime last_iteration = 0;  // duration of the last iteration
  std::vector<std::pair<RequestId, std::int64_t>> plan_prefill;  // this iteration's prefill chunks
  std::size_t plan_decode = 0;                                   // batch size at the iteration's start
};

}  // namespace kvscope
