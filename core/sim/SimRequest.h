#pragma once
// One turn in flight through the simulated cluster.
#include <cstdint>
#include <vector>

#include "core/events/Event.h"
#include "core/model/Ids.h"

namespace kvscope {

enum class RequestStage : std::uint8_t {
  Routing,          // deciding, in an admission RPC, or backing off after a reject
  WaitingSeedSlot,  // held by the router: the D's pending-seed budget is used up
  Prealloc,         // seed dispatched; D has not found room yet (the handshake clock runs)
  Seeding,          // D preallocated; in P's prefill and/or on the Mooncake link
  Prefilling,       // in D's scheduler, prefilling its uncached tokens locally
  Running,          // decoding in D's batch
  Finishing,        // last token sent; D commits the turn one iteration later
  Retracted,        // taken out of the batch when decode ran out of KV; waits to resume (NewTokenRatio.h)
};

struct SimRequest {
  RequestId id = 0;
  SessionId session = 0;
  std::uint32_t session_index = 0;
  std::int32_t turn = 1;  // 1-based
  SimTime arrival = 0;
  SimTime trace_time = 0;                           // when the trace has it (the dispatch slip is arrival - trace_time)
  std::int64_t ceiling_intra = 0, ceiling_any = 0;  // tokens an unbounded cache would have hit (PrefixCeiling)
  std::int64_t input = 0;
  std::int64_t output = 0;
  std::vector<BlockHash> hashes;

  RouteDecision decision;
  int rank_pos = 0;
  std::int32_t attempt = 0;  // bumped whenever the request leaves a stage; stale events carry an old one

  RequestStage stage = RequestStage::Routing;
  RoutePath path = RoutePath::Direct;
  WorkerId worker = kNoWorker;
  std::int32_t prefill = 0;

  std::int64_t cached = 0;             // tokens D already holds for this prompt
  std::int64_t prefix_hit = 0;         // prompt tokens the computing worker took from its prefix cache
  std::int64_t reserved = 0;           // tokens reserved on D (excluding decode growth)
  std::int64_t prefill_remaining = 0;  // local prefill still to do on D
  std::int64_t transfer_bytes = 0;
  SimTime first_token = -1;
  std::int32_t generated = 0;  // tokens produced before a retraction (0 until one happens)
  SimTime transfer_enqueued = 0;
  bool locked = false;     // holds a lock on its session's chain on `worker`
  bool seed_slot = false;  // counts against the D's pending-seed budget
  bool prealloc_done = false;
  bool prefill_done = false;
  bool on_link = false;  // enqueued on the Mooncake link, not finished
  bool transfer_started = false;
};

}  // namespace kvscope
