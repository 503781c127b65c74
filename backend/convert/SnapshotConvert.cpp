// The payloads other layers also store on their own (snapshots in keyframes and GetState, run
// metadata in recording headers, knob changes in SetKnobs replies) and the knob/policy metadata.
#include <cmath>
#include <string_view>
#include <utility>

#include "backend/convert/ConvertSupport.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"

namespace kvscope {

using namespace convert;

namespace {

void workerInfoToProto(const WorkerInfo& in, v1::WorkerInfo* out) {
  out->set_name(in.name);
  out->set_role(enumToProto(in.role));
  out->set_kv_capacity_tokens(in.kv_capacity_tokens);
}

bool decodeWorkerInfos(const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& in, std::vector<WorkerInfo>* out,
                       const char* field, std::string* error) {
  if (in.size() > kMaxWireWorkers) return fail(error, field, ": ", in.size(), " entries, at most ", kMaxWireWorkers);
  out->resize(static_cast<std::size_t>(in.size()));
  for (int i = 0; i < in.size(); ++i) {
    auto& w = (*out)[static_cast<std::size_t>(i)];
    w.name = in[i].name();
    w.kv_capacity_tokens = in[i].kv_capacity_tokens();
    if (!decodeEnum(in[i].role(), &w.role, "role", error)) return prefix(error, field, "[", i, "].");
  }
  return true;
}

}  // namespace

// ---- Snapshot -----------------------------------------------------------------------------------

void toProto(const Snapshot& in, v1::Snapshot* out) {
  out->Clear();
  out->mutable_workers()->Reserve(static_cast<int>(in.workers.size()));
  for (const auto& g : in.workers) {
    auto* p = out->add_workers();
    p->set_worker(g.worker);
    p->set_kv_used(g.kv_used);
    p->set_kv_capacity(g.kv_capacity);
    p->set_kv_peak(g.kv_peak);
    p->set_running(g.running);
    p->set_queued(g.queued);
    p->set_resident_sessions(g.resident_sessions);
    p->set_bindings(g.bindings);
    p->set_pending_seeds(g.pending_seeds);
    p->set_alive(g.alive);
    p->set_kv_evictable(g.kv_evictable);
    p->set_retracted_total(g.retracted_total);
    p->set_kv_capacity_violations(g.kv_capacity_violations);
    p->set_expired_unreported(g.expired_unreported);
    p->set_awaiting_report(g.awaiting_report);
    p->set_kv_event_blocks(g.kv_event_blocks);
    p->set_prefix_queried_tokens(g.prefix_queried_tokens);
    p->set_prefix_hit_tokens(g.prefix_hit_tokens);
    p->set_external_queried_tokens(g.external_queried_tokens);
    p->set_external_hit_tokens(g.external_hit_tokens);
    p->set_kv_event_stored(g.kv_event_stored);
    p->set_kv_event_removed(g.kv_event_removed);
  }
  out->mutable_links()->Reserve(static_cast<int>(in.links.size()));
  for (const auto& l : in.links) {
    auto* p = out->add_links();
    p->set_prefill(l.prefill);
    p->set_worker(l.worker);
    p->set_queue_depth(l.queue_depth);
    p->set_bytes_in_flight(l.bytes_in_flight);
    p->set_state(enumToProto(l.state));
  }
}

bool fromProto(const v1::Snapshot& in, Snapshot* out, std::string* error) {
  // Consumers index per-worker tables by these entries, so each names a real worker.
  constexpr int kMaxLinks = kMaxWirePrefill * kMaxWireWorkers;
  if (in.workers_size() > kMaxWireWorkers)
    return fail(error, "workers: ", in.workers_size(), " entries, at most ", kMaxWireWorkers);
  if (in.links_size() > kMaxLinks) return fail(error, "links: ", in.links_size(), " entries, at most ", kMaxLinks);
  Snapshot s;
  s.workers.resize(static_cast<std::size_t>(in.workers_size()));
  for (int i = 0; i < in.workers_size(); ++i) {
    const auto& p = in.workers(i);
    auto& g = s.workers[static_cast<std::size_t>(i)];
    if (!decodeWorker(p.worker(), false, &g.worker, "worker", error)) return prefix(error, "workers[", i, "].");
    g.kv_used = p.kv_used();
    g.kv_capacity = p.kv_capacity();
    g.kv_peak = p.kv_peak();
    g.kv_evictable = p.kv_evictable();
    g.retracted_total = p.retracted_total();
    g.kv_capacity_violations = p.kv_capacity_violations();
    g.expired_unreported = p.expired_unreported();
    g.awaiting_report = p.awaiting_report();
    g.kv_event_blocks = p.kv_event_blocks();
    g.prefix_queried_tokens = p.prefix_queried_tokens();
    g.prefix_hit_tokens = p.prefix_hit_tokens();
    g.external_queried_tokens = p.external_queried_tokens();
    g.external_hit_tokens = p.external_hit_tokens();
    g.kv_event_stored = p.kv_event_stored();
    g.kv_event_removed = p.kv_event_removed();
    g.running = p.running();
    g.queued = p.queued();
    g.resident_sessions = p.resident_sessions();
    g.bindings = p.bindings();
    g.pending_seeds = p.pending_seeds();
    g.alive = p.alive();
  }
  s.links.resize(static_cast<std::size_t>(in.links_size()));
  for (int i = 0; i < in.links_size(); ++i) {
    const auto& p = in.links(i);
    auto& l = s.links[static_cast<std::size_t>(i)];
    if (!decodePrefill(p.prefill(), false, &l.prefill, "prefill", error) ||
        !decodeWorker(p.worker(), false, &l.worker, "worker", error) ||
        !decodeEnum(p.state(), &l.state, "state", error))
      return prefix(error, "links[", i, "].");
    l.queue_depth = p.queue_depth();
    l.bytes_in_flight = p.bytes_in_flight();
  }
  *out = std::move(s);
  return true;
}

// ---- RunStarted ---------------------------------------------------------------------------------

void toProto(const RunStarted& in, v1::RunStarted* out) {
  out->Clear();
  out->set_scenario(in.scenario);
  out->set_policy(in.policy);
  out->set_seed(in.seed);
  out->set_profile(in.profile);
  out->set_build_version(KVSCOPE_VERSION);
  for (const auto& w : in.workers) workerInfoToProto(w, out->add_workers());
  for (const auto& w : in.prefill) workerInfoToProto(w, out->add_prefill());
  out->set_rho(in.rho);
  for (const auto& [name, value] : in.knobs) {
    auto* k = out->add_knobs();
    k->set_name(name);
    k->set_value(value);
  }
  out->set_dispatch(in.dispatch);
  out->set_offered_requests(in.offered_requests);
  out->set_trace_window_s(in.trace_window_s);
}

bool fromProto(const v1::RunStarted& in, RunStarted* out, std::string* error) {
  RunStarted r;
  r.scenario = in.scenario();
  r.policy = in.policy();
  r.seed = in.seed();
  r.profile = in.profile();
  if (!decodeWorkerInfos(in.workers(), &r.workers, "workers", error) ||
      !decodeWorkerInfos(in.prefill(), &r.prefill, "prefill", error))
    return false;
  r.rho = in.rho();
  r.knobs.reserve(static_cast<std::size_t>(in.knobs_size()));
  for (const auto& k : in.knobs()) r.knobs.emplace_back(k.name(), k.value());
  r.dispatch = in.dispatch();
  r.offered_requests = in.offered_requests();
  r.trace_window_s = in.trace_window_s();
  if (r.offered_requests < 0 || !(r.trace_window_s >= 0) || !std::isfinite(r.trace_window_s)) {
    if (error) *error = "offered_requests / trace_window_s: expected >= 0";
    return false;
  }
  *out = std::move(r);
  return true;
}

// ---- Operator changes ---------------------------------------------------------------------------

void toProto(const KnobChanged& in, v1::KnobChanged* out) {
  out->set_name(in.name);
  out->set_old_value(in.old_value);
  out->set_new_value(in.new_value);
  out->set_who(in.who);
  toProto(in.origin, out);
}

bool fromProto(const v1::KnobChanged& in, KnobChanged* out, std::string*) {
  *out = KnobChanged{in.name(), in.old_value(), in.new_value(), in.who(), originFromProto(in)};
  return true;
}

void toProto(const PolicyChanged& in, v1::PolicyChanged* out) {
  out->set_old_policy(in.old_policy);
  out->set_new_policy(in.new_policy);
  out->set_who(in.who);
  toProto(in.origin, out);
}

bool fromProto(const v1::PolicyChanged& in, PolicyChanged* out, std::string*) {
  *out = PolicyChanged{in.old_policy(), in.new_policy(), in.who(), originFromProto(in)};
  return true;
}

// ---- Knob metadata and policies -----------------------------------------------------------------

void toProto(const KnobSpec& in, v1::KnobSpec* out) {
  out->Clear();
  out->set_name(std::string(in.name));
  out->set_unit(std::string(in.unit));
  out->set_min(in.min);
  out->set_max(in.max);
  out->set_default_value(in.default_value);
  out->set_integer(in.integer);
  if (in.scope == KnobScope::Shared) out->add_policies("all");
  for (std::string_view p : policiesReading(in.id)) out->add_policies(std::string(p));
  out->set_description(std::string(in.description));
}

void policyToProto(std::string_view name, v1::Policy* out) {
  out->Clear();
  out->set_name(std::string(name));
  const PolicySpec* policy = findPolicy(name);
  for (const auto& spec : KnobRegistry::specs())
    if (policy ? policy->reads(spec.id) : spec.scope == KnobScope::Shared) out->add_knobs(std::string(spec.name));
}

}  // namespace kvscope
