#pragma once
// Between the policy and the workers (ARCHITECTURE.md D2 and D5): the path for a turn (direct
// append, seed, reseed, transient), the admission RPC with its no-space reject, the epsilon retry,
// backoff with jitter, the fallback seed, migration after repeated rejects, the session soft cap,
// and the streaming-session correction on D.
#include <functional>

#include "core/sim/DecodeScheduler.h"
#include "core/sim/SeedPipeline.h"
#include "core/sim/SimContext.h"

namespace kvscope {

class AdmissionFlow {
 public:
  AdmissionFlow(SimContext& ctx, DecodeScheduler& decode, SeedPipeline& seeds)
      : ctx_(ctx), decode_(decode), seeds_(seeds) {}

  void route(SimRequest& r);
  void onAdmitRpc(SimRequest& r, WorkerId w);
  void onFallback(SimRequest& r);
  // A waiting local request or seed found room in D's pool.
  void onSpace(SimRequest& r);
  // The worker the router had picked died before taking the request: back off and re-route.
  void onWorkerLost(SimRequest& r);

  std::function<void(WorkerId, const std::string&)> crash;  // set by the simulator

 private:
  void attempt(SimRequest& r, WorkerId w);
  RoutePath choosePath(const SimRequest& r, WorkerId w) const;
  void reject(SimRequest& r);
  void admit(SimRequest& r, WorkerId w, std::int64_t need, bool forced);
  // True when the correction fired and the request (or the worker) did not survive it.
  bool applyCorrection(SimRequest& r, DecodeWorker& w);
  std::int64_t seedCached(SimRequest& r, DecodeWorker& w);
  void enforceSoftCap(const SimRequest& r, DecodeWorker& w);
  void fillLoads();

  SimContext& ctx_;
  DecodeScheduler& decode_;
  SeedPipeline& seeds_;
  std::vector<WorkerLoad> loads_;
};

}  // namespace kvscope
