#include "core/events/Event.h"
#include "core/model/Overloaded.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace kvscope {

const char* toString(WorkerRole r) {
  switch (r) {
    case WorkerRole::Prefill:
      return "prefill";
    case WorkerRole::Decode:
      return "decode";
    case WorkerRole::Unified:
      return "unified";
  }
  return "?";
}
const char* toString(RoutePath p) {
  switch (p) {
    case RoutePath::Direct:
      return "direct";
    case RoutePath::Seed:
      return "seed";
    case RoutePath::Reseed:
      return "reseed";
    case RoutePath::Transient:
      return "transient";
    case RoutePath::Local:
      return "local";
  }
  return "?";
}
const char* toString(AdmissionResult r) {
  switch (r) {
    case AdmissionResult::Admitted:
      return "admitted";
    case AdmissionResult::NoSpace:
      return "no-space";
    case AdmissionResult::Rejected:
      return "rejected";
  }
  return "?";
}
const char* toString(LinkState s) {
  switch (s) {
    case LinkState::Alive:
      return "alive";
    case LinkState::Suspect:
      return "suspect";
    case LinkState::Dead:
      return "dead";
  }
  return "?";
}
const char* toString(EvictionGranularity g) { return g == EvictionGranularity::Session ? "session" : "block"; }
const char* toString(RequestStatus s) { return s == RequestStatus::Ok ? "ok" : "failed"; }
const char* toString(CorrectionFault f) {
  switch (f) {
    case CorrectionFault::Crash:
      return "crash";
    case CorrectionFault::Drop:
      return "drop";
    case CorrectionFault::None:
      return "none";
  }
  return "?";
}

const char* toString(RunAction a) {
  switch (a) {
    case RunAction::Paused:
      return "paused";
    case RunAction::Resumed:
      return "resumed";
    case RunAction::Speed:
      return "speed";
    case RunAction::Seek:
      return "seek";
  }
  return "?";
}

const char* toString(WorkerHealth h) {
  switch (h) {
    case WorkerHealth::Unknown:
      return "unknown";
    case WorkerHealth::Ok:
      return "ok";
    case WorkerHealth::Degraded:
      return "degraded";
    case WorkerHealth::Unreachable:
      return "unreachable";
  }
  return "?";
}

const char* toString(RunMarkAction a) { return a == RunMarkAction::Start ? "start" : "end"; }

namespace {
template <std::size_t N>
double lookup(const std::array<ScoreComponent, N>& items, std::uint8_t n, const char* name) {
  for (std::uint8_t i = 0; i < n && i < N; ++i)
    if (items[i].name && std::strcmp(items[i].name, name) == 0) return items[i].value;
  return std::numeric_limits<double>::quiet_NaN();
}
}  // namespace

double CandidateScore::component(const char* name) const { return lookup(components, num_components, name); }
double RouteDecision::field(const char* name) const { return lookup(fields, num_fields, name); }

const char* eventKindName(const EventPayload& p) {
  return std::visit(Overloaded{[](const RunStarted&) { return "run_started"; },
                               [](const RouteDecision&) { return "route"; },
                               [](const Admission&) { return "admission"; },
                               [](const SeedStarted&) { return "seed"; },
                               [](const TransferStarted&) { return "transfer_start"; },
                               [](const TransferFinished&) { return "transfer_end"; },
                               [](const Eviction&) { return "eviction"; },
                               [](const LinkHealth&) { return "link"; },
                               [](const WorkerCrashed&) { return "crash"; },
                               [](const WorkerRestarted&) { return "restart"; },
                               [](const Correction&) { return "correction"; },
                               [](const RequestDone&) { return "request_done"; },
                               [](const KnobChanged&) { return "knob"; },
                               [](const PolicyChanged&) { return "policy"; },
                               [](const Snapshot&) { return "snapshot"; },
                               [](const RunFinished&) { return "run_finished"; },
                               [](const RunControlChanged&) { return "run_control"; },
                               [](const RunMarked&) { return "run_mark"; },
                               [](const WorkerHealthChanged&) { return "health"; },
                               [](const Retraction&) { return "retraction"; }},
                    p);
}

}  // namespace kvscope
