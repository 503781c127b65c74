#pragma once
// The seed and reseed path (ARCHITECTURE.md D2): P prefills the prompt, D preallocates room,
// Mooncake moves the KV over the P->D link. Mooncake's liveness view is modelled as the lab saw it
// fail (taxonomy A): D must preallocate within the handshake window and the transfer must leave P's
// FIFO egress queue within it, else P marks the D dead and aborts every request in flight on that
// link; the link is probed again after the profile's probe interval.
#include <functional>
#include <string>

#include "core/sim/DecodeScheduler.h"
#include "core/sim/SimContext.h"

namespace kvscope {

class SeedPipeline {
 public:
  SeedPipeline(SimContext& ctx, DecodeScheduler& decode) : ctx_(ctx), decode_(decode) {}

  // Starts (or queues, under the pending-seed budget) a seed of `r` to r.worker. D preallocates
  // at dispatch, trimming idle sessions if it must; a seed that still finds no room waits in D's
  // prealloc queue while the handshake clock runs.
  void start(SimRequest& r);
  void onPrefillDone(SimRequest& r);
  void onPreallocDone(SimRequest& r);  // D found room for a waiting seed
  void onHandshakeCheck(SimRequest& r);
  void onSuspectCheck(SimRequest& r);
  void onEgressCheck(SimRequest& r);
  void onTransferDone(SimRequest& r);
  void onLinkRecover(std::int32_t p, WorkerId w);

  // Marks the link dead and aborts every request in flight on it.
  void markDead(std::int32_t p, WorkerId w, const std::string& reason);
  // Frees the request's seed slot and link share (before it is failed or finished).
  void detach(SimRequest& r);
  // Set by the simulator: a worker's engine died (restart: whether it comes back).
  std::function<void(WorkerId, const std::string&, bool restart)> crash;

  MooncakeLink& link(std::int32_t p, WorkerId w) {
    return ctx_.links[static_cast<std::size_t>(p)][static_cast<std::size_t>(w)];
  }

 private:
  void dispatch(SimRequest& r);
  void enqueueTransfer(SimRequest& r);
  void releaseSlot(WorkerId w);
  // Puts the next waiting transfer on the wire when the link is alive and idle.
  void startNextTransfer(std::int32_t p, WorkerId w);
  std::int32_t pickPrefill() const;
  // vLLM's connector, after P's prefill: D takes the turn when its KV fits, else it waits in order.
  void queueOnDecode(SimRequest& r);
  bool vllm() const { return ctx_.scenario.connector == Connector::Vllm; }
  // vLLM's connector: Mooncake sends every transfer through the GPUs' RDMA NICs, so a P sends and
  // a D receives one at a time (the lab's MB2: the 200 Gb/s NIC, not NVLink, is the bottleneck);
  // the oldest waiting transfer whose two ends are free goes next.
  void startFreeTransfers(std::int32_t p, WorkerId w);
  std::vector<char> p_nic_busy_, d_nic_busy_;

  SimContext& ctx_;
  DecodeScheduler& decode_;
};

}  // namespace kvscope
