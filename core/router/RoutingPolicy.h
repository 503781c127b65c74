#pragma once
// A routing policy is a pure decision: from the request's features and a read-only view of the
// cluster to every candidate's score components, ranked best first. State a policy needs (the
// round-robin position, a random draw) comes in through the RouteContext.
#include <algorithm>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/events/Event.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/ActiveSequences.h"
#include "core/router/PolicySpec.h"
#include "core/router/PrefixIndex.h"

namespace kvscope {

// What the router knows of one serving worker at decision time.
struct WorkerLoad {
  bool alive = true;
  std::int32_t running = 0;                 // requests in the worker's batch
  std::int32_t queued = 0;                  // requests waiting for the worker (incl. seeds in flight to it)
  std::int64_t pending_prefill_tokens = 0;  // prompt tokens still to be prefilled for this worker
  std::int64_t ongoing_tokens = 0;          // context tokens of its running + queued requests
  std::int64_t kv_used = 0;
  std::int64_t kv_capacity = 0;
  std::int32_t assigned_sessions = 0;  // sessions bound to it by the router now
  // Sessions the router ever placed on it (the lab's decode_assignment_counts: never decremented).
  std::int64_t assignments = 0;
  std::int32_t pending_seeds = 0;
};

struct RouteRequest {
  RequestId id = 0;
  SessionId session = 0;
  std::int32_t turn = 1;
  std::int32_t input_tokens = 0;
  std::span<const BlockHash> hashes;  // the prompt's blocks in the router's block size
  SimTime now = 0;                    // when it is routed (the approximate tree's clock)
};

struct RouteContext {
  const RouteRequest& request;
  std::span<const WorkerLoad> workers;  // indexed by WorkerId
  const PrefixIndex::Match& match;      // computed once per decision by the router
  int block_size = 24;
  WorkerId bound_worker = kNoWorker;  // the session's sticky binding (affinity); kNoWorker if fresh
  const KnobRegistry& knobs;
  std::uint64_t decision_index = 0;  // how many decisions the router made before this one
  double uniform = 0.0;              // a uniform draw in [0, 1) for stochastic policies
  // The router's own view (Dynamo's ActiveSequences): requests it routed and has not seen finish.
  const ActiveSequences* active = nullptr;
  std::span<const std::int64_t> tree_blocks;  // blocks the prefix index holds per worker (Dynamo's tree size)
  bool disaggregated = true;                  // the router picks the decode worker of a P/D pair
  // Cache hits in tokens per worker as the router's proxy LRU estimates them (cache_view proxy-lru,
  // for a policy that reads the view); empty: the index's exact match.
  std::span<const std::int64_t> proxy_cached;
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  // Its one entry in the registry (PolicySpec.h): name, knobs, components, ordering.
  virtual const PolicySpec& spec() const = 0;
  std::string_view name() const { return spec().name; }
  bool lowerIsBetter() const { return spec().lower_is_better; }
  bool retriesWithinEpsilon() const { return spec().retries_within_epsilon; }
  bool readsActiveBlocks() const { return spec().reads_active_blocks; }
  bool readsCacheView() const { return spec().reads_cache_view; }
  // Fills the decision: who asked, under which policy, every candidate ranked best first (rank()),
  // and `out.chosen` = the first eligible one (kNoWorker when none).
  void decide(const RouteContext& ctx, RouteDecision& out) const;
  // The router routed the request to `chosen`: policies with state of their own (SGLang's
  // approximate tree) record it here.
  virtual void routed(const RouteContext&, WorkerId /*chosen*/) {}

 protected:
  // Appends one candidate per worker (dead ones ineligible, ranked last), best first.
  virtual void rank(const RouteContext& ctx, RouteDecision& out) const = 0;
  // Tokens of the prompt already cached on worker `w`, from the index's prefix match.
  static std::int64_t cachedTokens(const RouteContext& ctx, std::size_t w);
  // Eligible candidates first, `chosen` at their head, the rest by score (then index); dead last.
  static void orderCandidates(RouteDecision& out, WorkerId chosen, bool lower_is_better);
  // Sorts the candidates by `less`, which must be a total order (every policy's ends on the worker
  // id), so the result is the one std::stable_sort gives. Sorting 2-byte positions and gathering once
  // moves no 120-byte candidate twice and allocates nothing per decision (stable_sort takes a
  // temporary buffer each time).
  template <typename Less>
  static void sortCandidates(std::vector<CandidateScore>& candidates, Less&& less) {
    thread_local std::vector<std::uint16_t> order;
    thread_local std::vector<CandidateScore> sorted;
    order.resize(candidates.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint16_t>(i);
    std::sort(order.begin(), order.end(),
              [&](std::uint16_t a, std::uint16_t b) { return less(candidates[a], candidates[b]); });
    sorted.resize(candidates.size());
    for (std::size_t i = 0; i < order.size(); ++i) sorted[i] = candidates[order[i]];
    candidates.swap(sorted);
  }
};

}  // namespace kvscope
