#pragma once
// Continuous batching on a serving worker: chunked local prefill and decode iterations whose
// duration comes from the hardware profile (base + per request + per context token + prefill
// tokens), decode growth in the KV pool with eviction when it runs full and retraction when even
// that leaves no room (NewTokenRatio.h), and the turn's commit one iteration after its last token
// (SGLang's overlap scheduler processes a batch's results while the next batch runs; this is the
// window in which the streaming-session correction can fire).
#include "core/sim/SimContext.h"

namespace kvscope {

class DecodeScheduler {
 public:
  explicit DecodeScheduler(SimContext& ctx) : ctx_(ctx) {}

  // The request holds its reservation and lock; it prefills `prefill_remaining` tokens here.
  void enqueuePrefill(SimRequest& r);
  // The KV arrived from P (first token made by P): the request decodes from the next iteration.
  void joinBatch(SimRequest& r);
  void onIteration(WorkerId w);
  void onCommit(RequestId id);
  // Takes the request out of this worker's queues and returns its pool resources.
  void remove(SimRequest& r);
  // Admits requests waiting for room, in order, as far as the pool allows.
  void admitWaiters(WorkerId w);
  // Whether `r` may take `need` tokens under `limit` now, evicting idle cache for them, by the rule
  // of the path it takes into the worker: the PrefillAdder's future-output reservation for a local
  // prefill, the PD prealloc queue's reserved decode tokens for a transfer (NewTokenRatio.h).
  bool roomFor(DecodeWorker& w, const SimRequest& r, std::int64_t need, std::int64_t limit, bool evict);
  // A crash: queues emptied (the requests are failed by the caller).
  void reset(WorkerId w);

  std::function<void(SimRequest&)> on_space;  // a waiter found room (set by the simulator)

 private:
  void startIteration(DecodeWorker& w);
  void release(DecodeWorker& w, SimRequest& r, bool commit_chain);
  // Room for the batch's next token: evict, else retract requests as retract_decode does.
  void makeDecodeRoom(DecodeWorker& w);
  std::int64_t retract(DecodeWorker& w, RunningSlot& slot);  // the tokens it freed
  void resumeRetracted(DecodeWorker& w);
  // Future output the requests already scheduled here may still need (the PrefillAdder's offset).
  std::int64_t outputReservation(const DecodeWorker& w) const;
  std::int64_t activeRequests(const DecodeWorker& w) const;

  SimContext& ctx_;
};

}  // namespace kvscope
