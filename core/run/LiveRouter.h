#pragma once
// The router core driving a real cluster (the Router RPC): the same Router object and policies the
// simulator uses, fed by what the lab's router reports instead of by a simulated cluster. It keeps
// the per-worker load the policies read (requests routed, admitted and finished; KV blocks stored
// and removed; seeds in flight; crashes), decides each request's worker and path, and publishes
// everything as events - route decisions, the observations themselves, knob and policy changes,
// and a snapshot of its gauges every second - so the console and recordings see a real cluster as
// they see a simulation. Time is wall time since construction. Thread-safe: gRPC threads call it.
//
// It is a RunControl for knobs and policy; a live cluster cannot be paused, paced or sought.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/events/Event.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/Router.h"
#include "core/run/LiveRunControl.h"
#include "core/run/UnreportedRequests.h"

namespace kvscope {

struct LiveClusterSpec {
  std::string name = "live";
  std::vector<WorkerInfo> workers;  // decode workers (1..64)
  std::vector<WorkerInfo> prefill;  // prefill workers (may be empty)
  int block_size = 24;              // tokens per block hash the router sends
  std::string policy = "kv-aware";
  std::map<std::string, double> knobs;  // overrides of the registry's defaults
};

class LiveRouter final : public LiveRunControl {
 public:
  static constexpr int kMaxBlockHashes = 1 << 16;  // per message: a 1.5M-token prompt at 24 tokens/block

  // Checks the spec (worker count, names, policy, knobs); on error throws InputError naming the field.
  // Standalone (`serve --router`): numbers and times its own stream, publishes RunStarted and a
  // snapshot of its gauges every second.
  LiveRouter(LiveClusterSpec spec, std::vector<EventSink*> sinks);
  // Part of a live cluster (`serve --live` with a `router:` section): posts its decisions and the
  // router's observations into the cluster's one stream, which numbers them (the publisher returns
  // the sequence number) and owns RunStarted and the snapshots.
  // `flush` ends a batch of the stream (see flush()).
  using Publisher = std::function<std::uint64_t(EventPayload)>;
  LiveRouter(LiveClusterSpec spec, Publisher publish, std::function<void()> flush = {});
  ~LiveRouter() override;  // stop()
  // Standalone: publishes RunFinished{completed=false} and stops the ticker. Idempotent.
  void stop();

  struct RouteInput {
    RequestId request = 0;
    SessionId session = 0;
    std::int32_t turn = 1;
    std::int64_t input_tokens = 0;
    std::vector<BlockHash> hashes;
    std::vector<WorkerId> candidates;  // empty: every worker
  };
  struct RouteResult {
    RouteDecision decision;
    RoutePath path = RoutePath::Seed;
    std::uint64_t seq = 0;
  };
  // `in` must be valid (worker indices in range: the service checks them against workers()).
  RouteResult route(const RouteInput& in);

  // An observed event (admission, seed, transfer, eviction, link, crash, restart, correction,
  // request done). False with a message naming the field for a kind KVScope makes itself, a
  // worker index outside the cluster or a number out of range (ObservationCheck.h); nothing is
  // applied then. blocksStored also refuses blocks that would overfill the worker's KV pool.
  bool observe(EventPayload payload, std::string* error);
  bool blocksStored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes, std::string* error);
  bool blocksRemoved(WorkerId worker, std::span<const BlockHash> hashes, std::string* error);

  // The policy and knobs now, then after every change (from the changing thread, outside the
  // router's lock; the callback must only queue). Returns an id for unwatchKnobs, or -1 when
  // kMaxKnobWatchers are watching already.
  static constexpr std::size_t kMaxKnobWatchers = 256;
  struct KnobState {
    std::string policy;
    std::vector<std::pair<std::string, double>> knobs;
    std::string who;
  };
  int watchKnobs(std::function<void(const KnobState&)> callback);
  void unwatchKnobs(int id);

  // What the cluster's other adapters saw (a crash in a scheduler log, a restart seen by /metrics):
  // lock-free, so a stream that holds its own lock while delivering can call it. The next route()
  // applies it: a crashed worker is no candidate and its cached blocks are forgotten.
  void noteWorkerCrashed(WorkerId worker);
  void noteWorkerRestarted(WorkerId worker);

  const LiveClusterSpec& spec() const { return spec_; }
  KnobState knobState() const;
  void publishSnapshot();  // also called by the ticker every second; ends a batch (flush())
  // Ends a batch of the stream: a recording writes out what it buffered (a Report call's end does
  // this, so a router killed right after its client reported keeps what it was told).
  void flush();
  // Per worker, the requests forgotten unreported so far and those still awaiting their report
  // (a live cluster's snapshots carry them).
  struct UnreportedCounts {
    std::vector<std::int64_t> expired, awaiting;
  };
  UnreportedCounts unreportedCounts() const;

  // RunControl
  bool canChangeKnobs() const override { return true; }
  void applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                  std::function<void(KnobRegistry::Result)> done) override;
  void setPolicy(std::string name, ChangeAuthor author, Done done) override;
  SimTime simTime() const override { return now(); }

 protected:
  void publishMark(const RunMarked& mark) override;

 private:
  struct Load {
    WorkerLoad load;
    std::int64_t kv_peak = 0;
    std::int32_t resident_sessions = 0;
  };
  enum class Stage : std::uint8_t { Routed, Admitted };
  struct InFlight {
    WorkerId worker;
    Stage stage;
    bool seeding;
  };

  void init();
  SimTime now() const;
  std::uint64_t publishLocked(EventPayload payload);
  void notifyKnobs(const KnobState& state);  // watchers_mutex_ held, not mutex_
  bool checkWorker(WorkerId w, const char* field, std::string* error) const;
  void applyLocked(const EventPayload& payload);
  // The longest prompt (or output) an observation may state: what one RouteRequest can carry.
  std::int64_t maxRequestTokens() const { return std::int64_t{kMaxBlockHashes} * spec_.block_size; }
  void finishRequestLocked(RequestId request);
  // Forgets requests routed and never reported (past unreported_expiry_s, or the oldest over the
  // max_tracked_* caps) and sessions idle past session_idle_s; gives memory back after a purge.
  void forgetUnreportedLocked();
  void setResidentLocked(SessionId session, WorkerId worker);
  KnobState knobStateLocked() const;

  const LiveClusterSpec spec_;
  std::vector<EventSink*> sinks_;
  Publisher publish_;
  std::function<void()> flush_;  // the stream's batch end: sinks' flush() (standalone) or the cluster's
  const bool standalone_;
  const std::int64_t start_ns_;
  mutable std::mutex mutex_;
  KnobRegistry knobs_;
  Router router_;
  std::vector<Load> loads_;
  std::vector<std::int64_t> capacity_;  // per worker, KV tokens (ObservationCheck's limits)
  // Per worker, set by note*() without the lock: 1 = crashed since the last route(), 2 = restarted.
  std::unique_ptr<std::atomic<int>[]> noted_;
  void applyNotesLocked();
  std::vector<WorkerLoad> decide_loads_;  // reused by route()
  absl::flat_hash_map<RequestId, InFlight> in_flight_;
  absl::flat_hash_map<SessionId, WorkerId> resident_;  // where each session's KV cache lives
  absl::flat_hash_map<SessionId, bool> seeded_;        // sessions seeded at least once
  UnreportedRequests unreported_;
  absl::flat_hash_map<SessionId, SimTime> session_seen_;  // when each session was last routed
  SimTime next_idle_sweep_ = 0;
  std::vector<std::int64_t> expired_;  // per worker: requests forgotten unreported, so far
  std::int64_t replaced_ = 0;          // Route calls that repeated a tracked id (a client's retry)
  std::uint64_t seq_ = 0;
  std::mutex watchers_mutex_;  // taken before mutex_, never after it
  std::map<int, std::function<void(const KnobState&)>> watchers_;
  int next_watcher_ = 1;
  bool stopped_ = false;

  std::mutex ticker_mutex_;
  std::condition_variable ticker_wake_;
  bool ticker_stop_ = false;
  std::thread ticker_;
};

}  // namespace kvscope
