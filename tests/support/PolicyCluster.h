#pragma once
// A hand-built cluster view for the routing-policy tests: loads, a real prefix index, knobs, the
// router's (and the lab proxy's) counters; `route` runs one decision of a policy on it.
#include <QtTest>

#include <span>
#include <string_view>
#include <vector>

#include "core/router/ActiveSequences.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"

namespace kvscope::test {

struct Cluster {
  std::vector<WorkerLoad> workers;
  std::vector<BlockHash> hashes;  // the request's blocks
  PrefixIndex index;
  KnobRegistry knobs;
  SessionId session = 1;
  int block_size = 24;
  int input_tokens = 0;
  WorkerId bound = kNoWorker;
  std::uint64_t decision_index = 0;
  double uniform = 0;
  ActiveSequences active;           // the router's (and the lab proxy's) counters
  std::vector<std::int64_t> proxy;  // cache hits as the proxy LRU estimates them (empty: exact)
  RequestId next_request = 100;

  explicit Cluster(int n, int blocks = 10) : workers(static_cast<std::size_t>(n)), active(n) {
    for (int i = 0; i < blocks; ++i) hashes.push_back(1000 + static_cast<BlockHash>(i));
    input_tokens = blocks * block_size;
  }
  // Worker `w` holds the request's first `count` blocks, stored by session `by`.
  void holds(WorkerId w, int count, SessionId by) {
    index.stored(w, by, std::span<const BlockHash>(hashes).first(static_cast<std::size_t>(count)));
  }
  void load(WorkerId w, int running, int queued = 0) {
    workers[w].running = running;
    workers[w].queued = queued;
  }
  bool knob(const char* name, double value) { return knobs.apply({{name, value}}, "test").ok; }
  // A request the router sent to `w`: `input` tokens, `uncached` of them still to prefill until
  // its first token (`started`: past it).
  void inflight(WorkerId w, std::int64_t input, std::int64_t uncached, bool started = false) {
    const RequestId id = next_request++;
    active.add(id, w, {}, uncached, input);
    if (started) active.prefillDone(id);
  }
  RouteDecision route(std::string_view policy) const {
    auto p = makePolicy(policy);
    return route(*p);
  }
  RouteDecision route(const RoutingPolicy& policy) const {
    PrefixIndex::Match m;
    index.match(hashes, session, static_cast<int>(workers.size()), m);
    const RouteRequest req{7, session, 1, input_tokens, hashes};
    const RouteContext ctx{req,     workers, m,  block_size, bound, knobs, decision_index,
                           uniform, &active, {}, true,       proxy};
    RouteDecision d;
    policy.decide(ctx, d);
    return d;
  }
};

inline QList<int> ranking(const RouteDecision& d) {
  QList<int> out;
  for (const auto& c : d.candidates) out.push_back(c.worker);
  return out;
}

inline const CandidateScore& of(const RouteDecision& d, WorkerId w) {
  for (const auto& c : d.candidates)
    if (c.worker == w) return c;
  qFatal("worker %d has no candidate", w);
}

inline double part(const RouteDecision& d, WorkerId w, const char* name) { return of(d, w).component(name); }

}  // namespace kvscope::test
