#pragma once
// The simulated prefill/decode cluster: a discrete-event simulation, deterministic for a seed (the
// same seed gives a byte-identical event stream). Not thread-safe: a runner thread owns it and
// applies knob and policy changes between events.
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model/Workload.h"
#include "core/scenario/Scenario.h"
#include "core/sim/AdmissionFlow.h"
#include "core/sim/DecodeScheduler.h"
#include "core/sim/PrefixCeiling.h"
#include "core/sim/SeedPipeline.h"
#include "core/sim/SimContext.h"

namespace kvscope {

// How the twin keeps its state, where there is more than one way to the same event stream. The
// router's index is kept per run of blocks (ChainIndex: a turn costs its new blocks, a cut costs the
// run it cuts); the per-block index the live router needs stays selectable so test_twin_equivalence
// can hold the two to byte-identical streams on every bundled scenario.
struct TwinOptions {
  Router::IndexKind index = Router::IndexKind::Chain;
};

class ClusterSimulator {
 public:
  ClusterSimulator(const Scenario& scenario, Workload workload, std::uint64_t seed, TwinOptions options = {});

  void addSink(EventSink* sink) { ctx_.sinks.push_back(sink); }

  // Validated all-or-nothing; every applied change becomes a KnobChanged event. Takes effect on the
  // next decision.
  KnobRegistry::Result applyKnobs(const std::map<std::string, double>& changes, const ChangeAuthor& author);
  bool setPolicy(std::string_view name, const ChangeAuthor& author);
  // A pause, resume or speed change made by whoever drives the simulation, into the stream at now().
  void publishRunControl(RunControlChanged change) { ctx_.publish(std::move(change)); }

  // Emits RunStarted and schedules the workload; the scenario's knobs and policy must be valid.
  void start();
  // Processes the next event; false when the run is over (duration reached or nothing left).
  bool step();
  // Processes every event up to simulated time `t`.
  void runUntil(SimTime t);
  void run() { runUntil(endTime()); }
  // Emits RunFinished (once).
  void finish(bool completed = true);

  SimTime now() const { return ctx_.now; }
  SimTime endTime() const { return end_; }
  bool done() const { return ctx_.agenda.empty() || ctx_.agenda.top().time > end_; }
  const KnobRegistry& knobs() const { return ctx_.knobs; }
  std::string_view policy() const { return ctx_.router.policyName(); }
  const Workload& workload() const { return workload_; }

  // Every KV pool's capacity, the most it ever held, the changes that took it over capacity (a
  // simulator bug, asserted in debug builds) and the requests its worker retracted.
  struct PoolCheck {
    std::string worker;  // "D0", "I2", "P1"
    std::int64_t capacity = 0;
    std::int64_t peak = 0;
    std::int64_t violations = 0;
    std::int64_t retractions = 0;
  };
  std::vector<PoolCheck> poolChecks() const;

  // What the router's prefix index and the workers' KV pools hold now (bench_cluster_scale's bytes
  // per resident block).
  struct MemoryUse {
    std::size_t index_bytes = 0;
    std::size_t index_blocks = 0;
    std::size_t pool_bytes = 0;
    std::size_t pool_blocks = 0;  // summed over pools: a block two D hold counts twice
  };
  MemoryUse memoryUse() const;

 private:
  void dispatch(const SimEvent& e);
  void arrive(std::uint32_t session_index, std::int32_t turn_index);
  // A turn that is ready, through the cap on requests in flight (max_inflight_requests).
  void ready(std::uint32_t session_index, std::int32_t turn_index);
  // A session's first turn, through the cap on sessions in flight (max_inflight_sessions); `admitted`:
  // the cap already counted it.
  void startSession(std::uint32_t session_index, bool admitted);
  void turnEnded(const SimRequest& r);
  void wallDeadline();
  void failRequest(RequestId id, const std::string& error);
  void completeRequest(SimRequest& r);
  void crashWorker(WorkerId w, const std::string& reason, bool restart = true);
  void restartWorker(WorkerId w);
  void snapshot();
  // workload.warm_start_policy: runs the workload once under that policy, silently, and starts with
  // the KV its engines kept (the router's index hears of it as stored blocks).
  void warmCaches();
  double sessionStartSeconds(std::size_t index) const;
  double traceSeconds(std::size_t session, std::size_t turn) const;  // the turn's time in the (scaled) trace

  Workload workload_;
  SimContext ctx_;
  DecodeScheduler decode_;
  SeedPipeline seeds_;
  AdmissionFlow admission_;
  SimTime end_;
  RequestId next_request_ = 1;
  bool finished_ = false;
  PrefixCeiling ceiling_;
  long sessions_in_flight_ = 0;
  std::deque<std::uint32_t> waiting_sessions_;  // over the cap, in the order they came
  long requests_in_flight_ = 0;
  std::deque<std::pair<std::uint32_t, std::int32_t>> waiting_requests_;  // (session, turn) over the request cap
  bool deadline_passed_ = false;
};

}  // namespace kvscope
