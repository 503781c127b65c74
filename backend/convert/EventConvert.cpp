#include "backend/convert/EventConvert.h"
#include "core/model/Overloaded.h"

#include <cmath>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/convert/ConvertSupport.h"
#include "core/events/EventLimits.h"
#include "core/run/RunMarkBook.h"

namespace kvscope {

namespace convert {

// ---- Score component names --------------------------------------------------------------------
// The core keeps ScoreComponent::name as a `const char*` to a static literal, so that a
// CandidateScore is a fixed-size value the router fills without allocating. A decoded name needs a
// pointer that stays valid as long as any event holding it: it is interned in a process-wide set
// that is never freed (a std::set never moves its nodes; leaking it keeps pointers valid even in
// events destroyed during static destruction). Real policies use a handful of names; a hostile stream
// could invent many, so the table stops growing at a cap and such names fail to decode instead.
// A small per-thread cache keeps the hot path (replaying a recording) free of the lock.
namespace {
constexpr std::size_t kMaxInternedNames = 4096;
constexpr std::size_t kMaxComponentNameLength = 128;
}  // namespace

const char* internComponentName(std::string_view name) {
  thread_local std::vector<std::pair<std::string_view, const char*>> cache;
  for (const auto& [key, interned] : cache)
    if (key == name) return interned;
  if (name.size() > kMaxComponentNameLength) return nullptr;

  static auto* mutex = new std::mutex();                          // never freed, see above
  static auto* table = new std::set<std::string, std::less<>>();  // never freed, see above
  const char* interned = nullptr;
  {
    std::lock_guard lock(*mutex);
    auto it = table->find(name);
    if (it == table->end()) {
      if (table->size() >= kMaxInternedNames) return nullptr;
      it = table->emplace(name).first;
    }
    interned = it->c_str();
  }
  if (cache.size() < 64) cache.emplace_back(std::string_view(interned, name.size()), interned);
  return interned;
}

}  // namespace convert

using namespace convert;

namespace {

// ---- core -> proto ------------------------------------------------------------------------------

void candidateToProto(const CandidateScore& in, v1::CandidateScore* out) {
  out->set_worker(in.worker);
  out->set_score(in.score);
  out->set_eligible(in.eligible);
  for (std::uint8_t i = 0; i < in.num_components && i < in.components.size(); ++i) {
    auto* c = out->add_components();
    c->set_name(in.components[i].name ? in.components[i].name : "");
    c->set_value(in.components[i].value);
  }
}

// One encoder per event kind, the mirror of decode() below: the core value's fields onto its message.
void encode(const RouteDecision& d, v1::RouteDecision* p) {
  p->set_request(d.request);
  p->set_session(d.session);
  p->set_turn(d.turn);
  p->set_policy(d.policy);
  p->set_chosen(d.chosen);
  p->set_lower_is_better(d.lower_is_better);
  p->mutable_candidates()->Reserve(static_cast<int>(d.candidates.size()));
  for (const auto& c : d.candidates) candidateToProto(c, p->add_candidates());
  for (std::uint8_t i = 0; i < d.num_fields && i < d.fields.size(); ++i) {
    auto* f = p->add_fields();
    f->set_name(d.fields[i].name ? d.fields[i].name : "");
    f->set_value(d.fields[i].value);
  }
  if (d.shape.known()) convert::shapeToProto(d.shape, p->mutable_shape());
}

void encode(const Admission& a, v1::Admission* p) {
  p->set_request(a.request);
  p->set_session(a.session);
  p->set_worker(a.worker);
  p->set_result(enumToProto(a.result));
  p->set_path(enumToProto(a.path));
  p->set_tokens(a.tokens);
}

void encode(const SeedStarted& s, v1::SeedStarted* p) {
  p->set_request(s.request);
  p->set_session(s.session);
  p->set_prefill(s.prefill);
  p->set_worker(s.worker);
  p->set_tokens(s.tokens);
  p->set_reseed(s.reseed);
}

void encode(const TransferStarted& s, v1::TransferStarted* p) {
  p->set_request(s.request);
  p->set_prefill(s.prefill);
  p->set_worker(s.worker);
  p->set_tokens(s.tokens);
  p->set_bytes(s.bytes);
  p->set_queue_wait_us(s.queue_wait);
}

void encode(const TransferFinished& s, v1::TransferFinished* p) {
  p->set_request(s.request);
  p->set_prefill(s.prefill);
  p->set_worker(s.worker);
  p->set_tokens(s.tokens);
  p->set_bytes(s.bytes);
  p->set_ok(s.ok);
  p->set_reason(s.reason);
}

void encode(const Eviction& v, v1::Eviction* p) {
  p->set_worker(v.worker);
  p->set_session(v.session);
  p->set_tokens_freed(v.tokens_freed);
  p->set_granularity(enumToProto(v.granularity));
  p->set_sessions_hit(v.sessions_hit);
}

void encode(const LinkHealth& l, v1::LinkHealth* p) {
  p->set_prefill(l.prefill);
  p->set_worker(l.worker);
  p->set_state(enumToProto(l.state));
  p->set_reason(l.reason);
  p->set_aborted_requests(l.aborted_requests);
}

void encode(const WorkerCrashed& c, v1::WorkerCrashed* p) {
  p->set_worker(c.worker);
  p->set_reason(c.reason);
  p->set_aborted_requests(c.aborted_requests);
}

void encode(const Correction& c, v1::Correction* p) {
  p->set_worker(c.worker);
  p->set_request(c.request);
  p->set_session(c.session);
  p->set_fill_len(c.fill_len);
  p->set_prefix_len(c.prefix_len);
  p->set_kv_committed_len(c.kv_committed_len);
  p->set_fault(enumToProto(c.fault));
}

void encode(const RequestDone& d, v1::RequestDone* p) {
  p->set_request(d.request);
  p->set_session(d.session);
  p->set_turn(d.turn);
  p->set_worker(d.worker);
  p->set_path(enumToProto(d.path));
  p->set_status(enumToProto(d.status));
  p->set_ttft_us(d.ttft);
  p->set_e2e_us(d.e2e);
  p->set_input_tokens(d.input_tokens);
  p->set_output_tokens(d.output_tokens);
  p->set_error(d.error);
  if (d.cached_tokens >= 0) p->set_cached_tokens(d.cached_tokens);
  if (d.ceiling_intra_tokens >= 0) p->set_ceiling_intra_tokens(d.ceiling_intra_tokens);
  if (d.ceiling_any_tokens >= 0) p->set_ceiling_any_tokens(d.ceiling_any_tokens);
  p->set_dispatch_slip_us(d.dispatch_slip);
}

void encode(const RunFinished& f, v1::RunFinished* m) {
  m->set_completed(f.completed);
  for (const auto& n : f.notes) m->add_notes(n);
}

void encode(const RunControlChanged& c, v1::RunControlChanged* p) {
  p->set_action(enumToProto(c.action));
  p->set_speed(c.speed);
  p->set_target_us(c.target);
  p->set_who(c.who);
  toProto(c.origin, p);
}

void encode(const WorkerHealthChanged& h, v1::WorkerHealthChanged* p) {
  p->set_worker(h.worker);
  p->set_health(enumToProto(h.health));
  p->set_reason(h.reason);
}

void encode(const Retraction& r, v1::Retraction* p) {
  p->set_worker(r.worker);
  for (RequestId id : r.requests) p->add_requests(id);
  p->set_tokens_freed(r.tokens_freed);
  p->set_new_token_ratio_before(r.new_token_ratio_before);
  p->set_new_token_ratio_after(r.new_token_ratio_after);
}

void payloadToProto(const EventPayload& payload, v1::Event* out) {
  std::visit(Overloaded{
                 [&](const RunStarted& r) { toProto(r, out->mutable_run_started()); },
                 [&](const RouteDecision& d) { encode(d, out->mutable_route()); },
                 [&](const Admission& a) { encode(a, out->mutable_admission()); },
                 [&](const SeedStarted& s) { encode(s, out->mutable_seed()); },
                 [&](const TransferStarted& s) { encode(s, out->mutable_transfer_start()); },
                 [&](const TransferFinished& s) { encode(s, out->mutable_transfer_end()); },
                 [&](const Eviction& v) { encode(v, out->mutable_eviction()); },
                 [&](const LinkHealth& l) { encode(l, out->mutable_link()); },
                 [&](const WorkerCrashed& c) { encode(c, out->mutable_crash()); },
                 [&](const WorkerRestarted& r) { out->mutable_restart()->set_worker(r.worker); },
                 [&](const Correction& c) { encode(c, out->mutable_correction()); },
                 [&](const RequestDone& d) { encode(d, out->mutable_request_done()); },
                 [&](const KnobChanged& k) { toProto(k, out->mutable_knob()); },
                 [&](const PolicyChanged& p) { toProto(p, out->mutable_policy()); },
                 [&](const Snapshot& s) { toProto(s, out->mutable_snapshot()); },
                 [&](const RunFinished& f) { encode(f, out->mutable_run_finished()); },
                 [&](const RunControlChanged& c) { encode(c, out->mutable_run_control()); },
                 [&](const RunMarked& m) { toProto(m, out->mutable_run_mark()); },
                 [&](const WorkerHealthChanged& h) { encode(h, out->mutable_health()); },
                 [&](const Retraction& r) { encode(r, out->mutable_retraction()); },
             },
             payload);
}

// ---- proto -> core ------------------------------------------------------------------------------
// Each decoder fills a fresh core value and returns false with the failing field's name; the caller
// prefixes its own context ("route.", "candidates[2].") on the way out.

bool decode(const v1::CandidateScore& in, CandidateScore* out, std::string* error) {
  if (!decodeWorker(in.worker(), false, &out->worker, "worker", error)) return false;
  out->score = in.score();
  out->eligible = in.eligible();
  if (in.components_size() > kMaxWireComponents)
    return fail(error, "components: ", in.components_size(), " entries, at most ", kMaxWireComponents);
  for (int i = 0; i < in.components_size(); ++i) {
    const auto& c = in.components(i);
    const char* name = internComponentName(c.name());
    if (!name)
      return fail(error, "components[", i, "].name: not accepted (longer than 128 bytes, or too many distinct names)");
    out->add(name, c.value());
  }
  return true;
}

bool decode(const v1::RouteDecision& in, RouteDecision* out, std::string* error) {
  out->request = in.request();
  out->session = in.session();
  out->turn = in.turn();
  out->policy = in.policy();
  if (!decodeWorker(in.chosen(), true, &out->chosen, "chosen", error)) return false;
  out->lower_is_better = in.lower_is_better();
  if (in.candidates_size() > kMaxWireWorkers)
    return fail(error, "candidates: ", in.candidates_size(), " entries, at most ", kMaxWireWorkers);
  out->candidates.resize(static_cast<std::size_t>(in.candidates_size()));
  for (int i = 0; i < in.candidates_size(); ++i)
    if (!decode(in.candidates(i), &out->candidates[static_cast<std::size_t>(i)], error))
      return prefix(error, "candidates[", i, "].");
  if (in.fields_size() > kMaxWireComponents)
    return fail(error, "fields: ", in.fields_size(), " entries, at most ", kMaxWireComponents);
  for (int i = 0; i < in.fields_size(); ++i) {
    const char* name = internComponentName(in.fields(i).name());
    if (!name)
      return fail(error, "fields[", i, "].name: not accepted (longer than 128 bytes, or too many distinct names)");
    out->addField(name, in.fields(i).value());
  }
  if (in.has_shape() && !convert::shapeFromProto(in.shape(), &out->shape, error)) return prefix(error, "shape.");
  return true;
}

bool decode(const v1::Admission& in, Admission* out, std::string* error) {
  out->request = in.request();
  out->session = in.session();
  out->tokens = in.tokens();
  return decodeWorker(in.worker(), true, &out->worker, "worker", error) &&
         decodeEnum(in.result(), &out->result, "result", error) && decodeEnum(in.path(), &out->path, "path", error);
}

bool decode(const v1::SeedStarted& in, SeedStarted* out, std::string* error) {
  out->request = in.request();
  out->session = in.session();
  out->tokens = in.tokens();
  out->reseed = in.reseed();
  return decodePrefill(in.prefill(), true, &out->prefill, "prefill", error) &&
         decodeWorker(in.worker(), true, &out->worker, "worker", error);
}

bool decode(const v1::TransferStarted& in, TransferStarted* out, std::string* error) {
  out->request = in.request();
  out->tokens = in.tokens();
  out->bytes = in.bytes();
  out->queue_wait = in.queue_wait_us();
  return decodePrefill(in.prefill(), true, &out->prefill, "prefill", error) &&
         decodeWorker(in.worker(), true, &out->worker, "worker", error);
}

bool decode(const v1::TransferFinished& in, TransferFinished* out, std::string* error) {
  out->request = in.request();
  out->tokens = in.tokens();
  out->bytes = in.bytes();
  out->ok = in.ok();
  out->reason = in.reason();
  return decodePrefill(in.prefill(), true, &out->prefill, "prefill", error) &&
         decodeWorker(in.worker(), true, &out->worker, "worker", error);
}

bool decode(const v1::Eviction& in, Eviction* out, std::string* error) {
  out->session = in.session();
  out->tokens_freed = in.tokens_freed();
  out->sessions_hit = in.sessions_hit();
  return decodeWorker(in.worker(), true, &out->worker, "worker", error) &&
         decodeEnum(in.granularity(), &out->granularity, "granularity", error);
}

bool decode(const v1::LinkHealth& in, LinkHealth* out, std::string* error) {
  out->reason = in.reason();
  out->aborted_requests = in.aborted_requests();
  return decodePrefill(in.prefill(), true, &out->prefill, "prefill", error) &&
         decodeWorker(in.worker(), true, &out->worker, "worker", error) &&
         decodeEnum(in.state(), &out->state, "state", error);
}

bool decode(const v1::WorkerCrashed& in, WorkerCrashed* out, std::string* error) {
  out->reason = in.reason();
  out->aborted_requests = in.aborted_requests();
  return decodeWorker(in.worker(), true, &out->worker, "worker", error);
}

bool decode(const v1::WorkerRestarted& in, WorkerRestarted* out, std::string* error) {
  return decodeWorker(in.worker(), true, &out->worker, "worker", error);
}

bool decode(const v1::Correction& in, Correction* out, std::string* error) {
  out->request = in.request();
  out->session = in.session();
  out->fill_len = in.fill_len();
  out->prefix_len = in.prefix_len();
  out->kv_committed_len = in.kv_committed_len();
  return decodeWorker(in.worker(), true, &out->worker, "worker", error) &&
         decodeEnum(in.fault(), &out->fault, "fault", error);
}

bool decode(const v1::RequestDone& in, RequestDone* out, std::string* error) {
  out->request = in.request();
  out->session = in.session();
  out->turn = in.turn();
  out->ttft = in.ttft_us();
  out->e2e = in.e2e_us();
  out->input_tokens = in.input_tokens();
  out->output_tokens = in.output_tokens();
  out->error = in.error();
  // Absent (a sender that does not know, or predates them) is -1.
  out->cached_tokens = in.has_cached_tokens() ? in.cached_tokens() : -1;
  out->ceiling_intra_tokens = in.has_ceiling_intra_tokens() ? in.ceiling_intra_tokens() : -1;
  out->ceiling_any_tokens = in.has_ceiling_any_tokens() ? in.ceiling_any_tokens() : -1;
  out->dispatch_slip = in.dispatch_slip_us();
  for (const auto& [field, value] :
       {std::pair{"cached_tokens", out->cached_tokens}, std::pair{"ceiling_intra_tokens", out->ceiling_intra_tokens},
        std::pair{"ceiling_any_tokens", out->ceiling_any_tokens}})
    if (value < -1 || (value >= 0 && value > std::max<std::int64_t>(0, out->input_tokens)))
      return fail(error, field, ": ", value, ", expected 0..input_tokens (", out->input_tokens, ")");
  return decodeWorker(in.worker(), true, &out->worker, "worker", error) &&
         decodeEnum(in.path(), &out->path, "path", error) && decodeEnum(in.status(), &out->status, "status", error);
}

bool decode(const v1::RunFinished& in, RunFinished* out, std::string* error) {
  out->completed = in.completed();
  if (static_cast<std::size_t>(in.notes_size()) > RunFinished::kMaxNotes) {
    if (error)
      *error = "field 'notes': expected at most " + std::to_string(RunFinished::kMaxNotes) + ", got " +
               std::to_string(in.notes_size());
    return false;
  }
  out->notes.assign(in.notes().begin(), in.notes().end());
  return true;
}

bool decode(const v1::RunControlChanged& in, RunControlChanged* out, std::string* error) {
  out->speed = in.speed();
  out->target = in.target_us();
  out->who = in.who();
  out->origin = originFromProto(in);
  return decodeEnum(in.action(), &out->action, "action", error);
}

bool decode(const v1::RunMarked& in, RunMarked* out, std::string* error) {
  // The limits a marker had when it entered the stream (RunMarkBook), so a file cannot inflate one.
  out->index = in.index();
  out->name = in.name();
  out->who = in.who();
  out->origin = originFromProto(in);
  if (in.name().size() > kMaxRunNameBytes)
    return fail(error, "name: ", in.name().size(), " bytes, at most ", kMaxRunNameBytes);
  if (static_cast<std::size_t>(in.parameters_size()) > kMaxRunParameters)
    return fail(error, "parameters: ", in.parameters_size(), " entries, at most ", kMaxRunParameters);
  for (int i = 0; i < in.parameters_size(); ++i) {
    const auto& p = in.parameters(i);
    if (p.name().size() > kMaxRunParameterNameBytes || p.value().size() > kMaxRunParameterValueBytes)
      return fail(error, "parameters[", i, "]: longer than ", kMaxRunParameterNameBytes, " (name) or ",
                  kMaxRunParameterValueBytes, " (value) bytes");
    out->parameters.emplace_back(p.name(), p.value());
  }
  return decodeEnum(in.action(), &out->action, "action", error);
}

bool decode(const v1::WorkerHealthChanged& in, WorkerHealthChanged* out, std::string* error) {
  out->worker = in.worker();
  out->reason = in.reason();
  return decodeEnum(in.health(), &out->health, "health", error);
}

bool decode(const v1::Retraction& in, Retraction* out, std::string* error) {
  // A batch holds at most max_running_requests; a stream claiming more is not one the twin wrote.
  if (in.requests_size() > kMaxRetractedRequests)
    return fail(error, "requests: ", in.requests_size(), " entries, at most ", kMaxRetractedRequests);
  out->requests.assign(in.requests().begin(), in.requests().end());
  out->tokens_freed = in.tokens_freed();
  out->new_token_ratio_before = in.new_token_ratio_before();
  out->new_token_ratio_after = in.new_token_ratio_after();
  if (!std::isfinite(out->new_token_ratio_before) || !std::isfinite(out->new_token_ratio_after))
    return fail(error, "new_token_ratio: not a finite number");
  return decodeWorker(in.worker(), true, &out->worker, "worker", error);
}

// The payloads with a public fromProto go through it (same validation, one implementation).
bool decode(const v1::RunStarted& in, RunStarted* out, std::string* error) { return fromProto(in, out, error); }
bool decode(const v1::KnobChanged& in, KnobChanged* out, std::string* error) { return fromProto(in, out, error); }
bool decode(const v1::PolicyChanged& in, PolicyChanged* out, std::string* error) { return fromProto(in, out, error); }
bool decode(const v1::Snapshot& in, Snapshot* out, std::string* error) { return fromProto(in, out, error); }

// Decodes one payload message into the event's variant, prefixing errors with the kind name.
template <class Core, class Proto>
bool decodePayload(const Proto& in, EventPayload* out, std::string* error) {
  Core value;
  if (!decode(in, &value, error)) return prefix(error, eventKindName(EventPayload{std::in_place_type<Core>}), ".");
  out->template emplace<Core>(std::move(value));
  return true;
}

}  // namespace

void toProto(const RunMarked& in, v1::RunMarked* out) {
  out->set_action(enumToProto(in.action));
  out->set_index(in.index);
  out->set_name(in.name);
  for (const auto& [name, value] : in.parameters) {
    auto* param = out->add_parameters();
    param->set_name(name);
    param->set_value(value);
  }
  out->set_who(in.who);
  toProto(in.origin, out);
}

void toProto(const Event& in, v1::Event* out) {
  out->Clear();
  out->set_seq(in.seq);
  out->set_time_us(in.time);
  payloadToProto(in.payload, out);
}

bool fromProto(const v1::Event& in, Event* out, std::string* error) {
  EventPayload payload;
  bool ok = false;
  using P = v1::Event;
  switch (in.payload_case()) {
    case P::kRoute:
      ok = decodePayload<RouteDecision>(in.route(), &payload, error);
      break;
    case P::kAdmission:
      ok = decodePayload<Admission>(in.admission(), &payload, error);
      break;
    case P::kSeed:
      ok = decodePayload<SeedStarted>(in.seed(), &payload, error);
      break;
    case P::kTransferStart:
      ok = decodePayload<TransferStarted>(in.transfer_start(), &payload, error);
      break;
    case P::kTransferEnd:
      ok = decodePayload<TransferFinished>(in.transfer_end(), &payload, error);
      break;
    case P::kEviction:
      ok = decodePayload<Eviction>(in.eviction(), &payload, error);
      break;
    case P::kRequestDone:
      ok = decodePayload<RequestDone>(in.request_done(), &payload, error);
      break;
    case P::kSnapshot:
      ok = decodePayload<Snapshot>(in.snapshot(), &payload, error);
      break;
    case P::kLink:
      ok = decodePayload<LinkHealth>(in.link(), &payload, error);
      break;
    case P::kCorrection:
      ok = decodePayload<Correction>(in.correction(), &payload, error);
      break;
    case P::kCrash:
      ok = decodePayload<WorkerCrashed>(in.crash(), &payload, error);
      break;
    case P::kRestart:
      ok = decodePayload<WorkerRestarted>(in.restart(), &payload, error);
      break;
    case P::kKnob:
      ok = decodePayload<KnobChanged>(in.knob(), &payload, error);
      break;
    case P::kPolicy:
      ok = decodePayload<PolicyChanged>(in.policy(), &payload, error);
      break;
    case P::kRunStarted:
      ok = decodePayload<RunStarted>(in.run_started(), &payload, error);
      break;
    case P::kRunFinished:
      ok = decodePayload<RunFinished>(in.run_finished(), &payload, error);
      break;
    case P::kRunControl:
      ok = decodePayload<RunControlChanged>(in.run_control(), &payload, error);
      break;
    case P::kRunMark:
      ok = decodePayload<RunMarked>(in.run_mark(), &payload, error);
      break;
    case P::kHealth:
      ok = decodePayload<WorkerHealthChanged>(in.health(), &payload, error);
      break;
    case P::kRetraction:
      ok = decodePayload<Retraction>(in.retraction(), &payload, error);
      break;
    case P::PAYLOAD_NOT_SET:
      // Also what a kind added by a newer build looks like (an unknown field to this one).
      return fail(error, "event seq ", in.seq(), " has no payload (empty, or a kind this build does not know)");
  }
  if (!ok) return ok;
  out->seq = in.seq();
  out->time = in.time_us();
  out->payload = std::move(payload);
  return true;
}

const char* eventKindName(const v1::Event& e) {
  if (e.payload_case() == v1::Event::PAYLOAD_NOT_SET) return "";
  // The oneof's field names are the core's kind names (events.proto); the descriptor is static.
  const auto* field = v1::Event::descriptor()->FindFieldByNumber(static_cast<int>(e.payload_case()));
  return field ? field->name().c_str() : "";
}

}  // namespace kvscope
