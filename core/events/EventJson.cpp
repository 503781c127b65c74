#include "core/events/EventJson.h"

#include <nlohmann/json.hpp>

namespace kvscope {

namespace {
using nlohmann::json;

json candidatesJson(const RouteDecision& d) {
  json out = json::array();
  for (const auto& c : d.candidates) {
    json comps = json::object();
    for (std::uint8_t i = 0; i < c.num_components; ++i) comps[c.components[i].name] = c.components[i].value;
    out.push_back({{"worker", c.worker}, {"score", c.score}, {"eligible", c.eligible}, {"components", comps}});
  }
  return out;
}

// A remote change's origin beside its label: {"origin": {"peer": ..., "identity": ...}}; absent for a
// change made in this process, so those lines read as before.
void addOrigin(json& j, const ChangeOrigin& origin) {
  if (origin.remote()) j["origin"] = {{"peer", origin.peer}, {"identity", origin.identity}};
}

// One function per event kind: the fields its JSON line carries beside seq, t_us and kind.
void addFields(json& j, const RunStarted& r) {
  j["scenario"] = r.scenario;
  j["policy"] = r.policy;
  j["seed"] = r.seed;
  j["profile"] = r.profile;
  j["rho"] = r.rho;
  j["knobs"] = json::object();
  for (const auto& [name, value] : r.knobs) j["knobs"][name] = value;
  for (const auto& w : r.workers)
    j["workers"].push_back({{"name", w.name}, {"role", toString(w.role)}, {"kv_capacity", w.kv_capacity_tokens}});
  for (const auto& w : r.prefill)
    j["prefill"].push_back({{"name", w.name}, {"role", toString(w.role)}, {"kv_capacity", w.kv_capacity_tokens}});
  if (!r.dispatch.empty())
    j.update(
        {{"dispatch", r.dispatch}, {"offered_requests", r.offered_requests}, {"trace_window_s", r.trace_window_s}});
}

void addFields(json& j, const RouteDecision& d) {
  j.update({{"request", d.request},
            {"session", d.session},
            {"turn", d.turn},
            {"policy", d.policy},
            {"chosen", d.chosen},
            {"lower_is_better", d.lower_is_better},
            {"candidates", candidatesJson(d)}});
  if (d.num_fields > 0) {
    j["fields"] = json::object();
    for (std::uint8_t i = 0; i < d.num_fields; ++i) j["fields"][d.fields[i].name] = d.fields[i].value;
  }
  if (d.shape.known()) {
    json shape = {{"input_tokens", d.shape.input_tokens}};
    if (d.shape.output_tokens >= 0) shape["output_tokens"] = d.shape.output_tokens;
    if (d.shape.trace_time >= 0) shape["trace_time_us"] = d.shape.trace_time;
    if (d.shape.think >= 0) shape["think_us"] = d.shape.think;
    if (d.shape.session_turns > 0) shape["session_turns"] = d.shape.session_turns;
    if (d.shape.due_start >= 0) shape["due_start_us"] = d.shape.due_start;
    const PromptLayout& l = d.shape.prompt;
    if (l.input_tokens > 0) {
      json prompt = {{"shared_prefix_tokens", l.shared_prefix_tokens},
                     {"shared_scope", l.shared_scope},
                     {"session_scope", l.session_scope}};
      if (l.source_block_size > 0) {
        prompt["source_block_size"] = l.source_block_size;
        prompt["source_hashes"] = l.source_hashes;
        prompt["unique_scope"] = l.unique_scope;
      }
      shape["prompt"] = std::move(prompt);
    }
    j["shape"] = std::move(shape);
  }
}

void addFields(json& j, const Admission& a) {
  j.update({{"request", a.request},
            {"session", a.session},
            {"worker", a.worker},
            {"result", toString(a.result)},
            {"path", toString(a.path)},
            {"tokens", a.tokens}});
}

void addFields(json& j, const SeedStarted& s) {
  j.update({{"request", s.request},
            {"session", s.session},
            {"prefill", s.prefill},
            {"worker", s.worker},
            {"tokens", s.tokens},
            {"reseed", s.reseed}});
}

void addFields(json& j, const TransferStarted& s) {
  j.update({{"request", s.request},
            {"prefill", s.prefill},
            {"worker", s.worker},
            {"tokens", s.tokens},
            {"bytes", s.bytes},
            {"queue_wait_us", s.queue_wait}});
}

void addFields(json& j, const TransferFinished& s) {
  j.update({{"request", s.request},
            {"prefill", s.prefill},
            {"worker", s.worker},
            {"tokens", s.tokens},
            {"bytes", s.bytes},
            {"ok", s.ok},
            {"reason", s.reason}});
}

void addFields(json& j, const Eviction& v) {
  j.update({{"worker", v.worker},
            {"session", v.session},
            {"tokens_freed", v.tokens_freed},
            {"granularity", toString(v.granularity)},
            {"sessions_hit", v.sessions_hit}});
}

void addFields(json& j, const LinkHealth& l) {
  j.update({{"prefill", l.prefill},
            {"worker", l.worker},
            {"state", toString(l.state)},
            {"reason", l.reason},
            {"aborted_requests", l.aborted_requests}});
}

void addFields(json& j, const WorkerCrashed& c) {
  j.update({{"worker", c.worker}, {"reason", c.reason}, {"aborted_requests", c.aborted_requests}});
}

void addFields(json& j, const WorkerRestarted& r) { j["worker"] = r.worker; }

void addFields(json& j, const Correction& c) {
  j.update({{"worker", c.worker},
            {"request", c.request},
            {"session", c.session},
            {"fill_len", c.fill_len},
            {"prefix_len", c.prefix_len},
            {"kv_committed_len", c.kv_committed_len},
            {"fault", toString(c.fault)}});
}

void addFields(json& j, const RequestDone& d) {
  j.update({{"request", d.request},
            {"session", d.session},
            {"turn", d.turn},
            {"worker", d.worker},
            {"path", toString(d.path)},
            {"status", toString(d.status)},
            {"ttft_us", d.ttft},
            {"e2e_us", d.e2e},
            {"input_tokens", d.input_tokens},
            {"output_tokens", d.output_tokens},
            {"error", d.error}});
  if (d.cached_tokens >= 0) j["cached_tokens"] = d.cached_tokens;
  if (d.ceiling_intra_tokens >= 0) j["ceiling_intra_tokens"] = d.ceiling_intra_tokens;
  if (d.ceiling_any_tokens >= 0) j["ceiling_any_tokens"] = d.ceiling_any_tokens;
  if (d.dispatch_slip != 0) j["dispatch_slip_us"] = d.dispatch_slip;
}

void addFields(json& j, const KnobChanged& k) {
  j.update({{"name", k.name}, {"old", k.old_value}, {"new", k.new_value}, {"who", k.who}});
  addOrigin(j, k.origin);
}

void addFields(json& j, const PolicyChanged& p) {
  j.update({{"old", p.old_policy}, {"new", p.new_policy}, {"who", p.who}});
  addOrigin(j, p.origin);
}

void addFields(json& j, const Snapshot& s) {
  for (const auto& g : s.workers)
    j["workers"].push_back({{"worker", g.worker},
                            {"kv_used", g.kv_used},
                            {"kv_capacity", g.kv_capacity},
                            {"kv_peak", g.kv_peak},
                            {"running", g.running},
                            {"queued", g.queued},
                            {"resident_sessions", g.resident_sessions},
                            {"bindings", g.bindings},
                            {"pending_seeds", g.pending_seeds},
                            {"alive", g.alive},
                            {"kv_evictable", g.kv_evictable},
                            {"retracted_total", g.retracted_total},
                            {"kv_capacity_violations", g.kv_capacity_violations},
                            {"expired_unreported", g.expired_unreported},
                            {"awaiting_report", g.awaiting_report},
                            {"kv_event_blocks", g.kv_event_blocks},
                            {"prefix_queried_tokens", g.prefix_queried_tokens},
                            {"prefix_hit_tokens", g.prefix_hit_tokens},
                            {"external_queried_tokens", g.external_queried_tokens},
                            {"external_hit_tokens", g.external_hit_tokens},
                            {"kv_event_stored", g.kv_event_stored},
                            {"kv_event_removed", g.kv_event_removed}});
  for (const auto& l : s.links)
    j["links"].push_back({{"prefill", l.prefill},
                          {"worker", l.worker},
                          {"queue_depth", l.queue_depth},
                          {"bytes_in_flight", l.bytes_in_flight},
                          {"state", toString(l.state)}});
}

void addFields(json& j, const RunFinished& f) {
  j["completed"] = f.completed;
  if (!f.notes.empty()) j["notes"] = f.notes;
}

void addFields(json& j, const RunControlChanged& c) {
  j.update({{"action", toString(c.action)}, {"speed", c.speed}, {"target_us", c.target}, {"who", c.who}});
  addOrigin(j, c.origin);
}

void addFields(json& j, const RunMarked& m) {
  // [[name, value], ...]: a JSON object would lose the order the sweep script gave them in.
  json params = json::array();
  for (const auto& [k, v] : m.parameters) params.push_back({k, v});
  j.update({{"action", toString(m.action)}, {"index", m.index}, {"name", m.name}, {"who", m.who}});
  addOrigin(j, m.origin);
  j["parameters"] = params;
}

void addFields(json& j, const WorkerHealthChanged& h) {
  j.update({{"worker", h.worker}, {"health", toString(h.health)}, {"reason", h.reason}});
}

void addFields(json& j, const Retraction& r) {
  j.update({{"worker", r.worker},
            {"requests", r.requests},
            {"tokens_freed", r.tokens_freed},
            {"new_token_ratio_before", r.new_token_ratio_before},
            {"new_token_ratio_after", r.new_token_ratio_after}});
}

}  // namespace

json eventToJson(const Event& e) {
  json j{{"seq", e.seq}, {"t_us", e.time}, {"kind", eventKindName(e.payload)}};
  std::visit([&](const auto& payload) { addFields(j, payload); }, e.payload);
  return j;
}

}  // namespace kvscope
