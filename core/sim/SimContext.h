#pragma once
// State shared by the simulator's parts (admission, seeds, decode scheduling): the agenda, the
// requests in flight, the workers and links, the knobs and the event stream.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/events/Event.h"
#include "core/knobs/KnobRegistry.h"
#include "core/model/Distribution.h"
#include "core/router/Router.h"
#include "core/scenario/Scenario.h"
#include "core/sim/DecodeWorker.h"
#include "core/sim/SimEventQueue.h"
#include "core/sim/SimRequest.h"

namespace kvscope {

struct SessionProgress {
  std::int32_t next_turn = 0;   // sequential dispatch: index of the turn to send next
  std::int32_t turns_left = 0;  // turns not yet finished (for unbinding at the end)
  std::int32_t rejects = 0;     // admission rejects so far (migration threshold)
  bool ever_seeded = false;     // a later seed of this session is a reseed
};

struct SimContext {
  const Scenario& scenario;
  const HardwareProfile& profile;
  KnobRegistry knobs;
  Router router;
  SimEventQueue agenda;
  SimTime now = 0;
  SplitMix64 rng;

  std::vector<std::unique_ptr<DecodeWorker>> workers;
  std::vector<std::unique_ptr<PrefillWorker>> prefill;
  std::vector<std::vector<MooncakeLink>> links;  // [prefill][worker]
  absl::flat_hash_map<RequestId, SimRequest> requests;
  std::vector<SessionProgress> sessions;

  std::vector<EventSink*> sinks;
  std::uint64_t next_seq = 0;
  // Set by ClusterSimulator: ends a request as failed wherever it is, and closes a finished one.
  std::function<void(RequestId, const std::string&)> fail;
  std::function<void(SimRequest&)> completed;  // last token sent (status ok)

  SimContext(const Scenario& s, std::uint64_t seed, Router::IndexKind index)
      : scenario(s),
        profile(s.profile),
        router(s.decode_workers, s.block_size, knobs, seed, index),
        rng(seed ^ 0x73696dULL) {
    router.setDisaggregated(s.disaggregated);
  }

  template <class Payload>
  void publish(Payload&& p) {
    Event e{next_seq++, now, EventPayload{std::forward<Payload>(p)}};
    for (EventSink* s : sinks) s->onEvent(e);
  }
  DecodeWorker& worker(WorkerId w) { return *workers[static_cast<std::size_t>(w)]; }
  std::int64_t pressureLimit(const DecodeWorker& w) const {
    return static_cast<std::int64_t>(knobs.get(KnobId::Rho) * static_cast<double>(w.pool.capacity()));
  }
  SimRequest* find(RequestId id) {
    auto it = requests.find(id);
    return it == requests.end() ? nullptr : &it->second;
  }
  // The request if it still exists and is in the same attempt as the event that names it.
  SimRequest* current(RequestId id, std::int32_t attempt) {
    SimRequest* r = find(id);
    return r && r->attempt == attempt ? r : nullptr;
  }
  std::string workerName(WorkerId w) const {
    return std::string(scenario.disaggregated ? "D" : "I") + std::to_string(w);
  }
};

}  // namespace kvscope
