#pragma once
// The vocabulary of every screen, file and RPC (ARCHITECTURE.md "Events and snapshots").
// Every event has a sequence number, a time in microseconds and a payload; the payload's type is the
// event's kind. Value types only: the simulator, the recorder, the diagnosis engine and the GUI all
// consume the same structs.
#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/events/ChangeAuthor.h"
#include "core/model/Ids.h"
#include "core/model/Prompt.h"

namespace kvscope {

enum class WorkerRole : std::uint8_t { Prefill, Decode, Unified };
// How a turn reaches its decode worker (ARCHITECTURE.md D2). `Local` is a non-disaggregated
// instance prefilling its own prompt; `Transient` is a turn below seed_min_turn_id, sent through P
// and decoded without keeping its KV as a session cache.
enum class RoutePath : std::uint8_t { Direct, Seed, Reseed, Transient, Local };
enum class AdmissionResult : std::uint8_t { Admitted, NoSpace, Rejected };
enum class LinkState : std::uint8_t { Alive, Suspect, Dead };
enum class EvictionGranularity : std::uint8_t { Session, Block };
enum class RequestStatus : std::uint8_t { Ok, Failed };
enum class CorrectionFault : std::uint8_t { Crash, Drop, None };
// What an operator did to the run's playback (not to what the run simulates).
enum class RunAction : std::uint8_t { Paused, Resumed, Speed, Seek };
// Where a marked run of a live sweep begins or ends (Control.MarkRun).
enum class RunMarkAction : std::uint8_t { Start, End };
// A real worker as the live cluster's scrapers see it (Unknown: not scraped yet, or no metrics URL).
enum class WorkerHealth : std::uint8_t { Unknown, Ok, Degraded, Unreachable };

const char* toString(WorkerRole);
const char* toString(RoutePath);
const char* toString(AdmissionResult);
const char* toString(LinkState);
const char* toString(EvictionGranularity);
const char* toString(RequestStatus);
const char* toString(CorrectionFault);
const char* toString(RunAction);
const char* toString(RunMarkAction);
const char* toString(WorkerHealth);

// One named term of a candidate's score, for "why did this go to D1?". Names are static strings.
struct ScoreComponent {
  const char* name = nullptr;
  double value = 0;
};

struct CandidateScore {
  WorkerId worker = kNoWorker;
  double score = 0;      // the policy's total; see RoutingDecision::lower_is_better
  bool eligible = true;  // false when the worker is dead or excluded by admission
  std::uint8_t num_components = 0;
  std::array<ScoreComponent, 6> components{};
  void add(const char* name, double value) {
    if (num_components < components.size()) components[num_components++] = {name, value};
  }
  double component(const char* name) const;  // NaN when absent
};

struct WorkerInfo {
  std::string name;  // "P0", "D2", "I1"
  WorkerRole role = WorkerRole::Decode;
  std::int64_t kv_capacity_tokens = 0;
};

struct RunStarted {
  std::string scenario;
  std::string policy;
  std::uint64_t seed = 0;
  std::string profile;
  std::vector<WorkerInfo> workers;  // serving workers, indexed by WorkerId
  std::vector<WorkerInfo> prefill;  // prefill workers (empty when not disaggregated)
  double rho = 0.95;
  std::vector<std::pair<std::string, double>> knobs;  // every knob's value at the start
  // A workload replayed by a simulation (0 / empty when the source has no workload of its own: a
  // live cluster, an import): how its turns are fired, how many requests it offers, and the span of
  // its trace times (what the lab's wall amplification divides by).
  std::string dispatch;
  std::int64_t offered_requests = 0;
  double trace_window_s = 0;
};

// What a routed request was, as the twin needs it to run the same traffic again
// (backend/recording/RecordingWorkload): its sizes, when it was due and how its prompt is made.
// The simulator fills it for every request; a live router, what it was told (input tokens, and the
// block hashes it saw as the prompt's source hashes).
struct RequestShape {
  std::int64_t input_tokens = -1;   // -1: not known
  std::int64_t output_tokens = -1;  // -1: not known before the request finished (live)
  SimTime trace_time = -1;          // its time in the trace being replayed (-1: none)
  // A session's first turn fired at a start window's slot rather than its trace time: that slot
  // (-1: it fired at its trace time, or under burst at 0).
  SimTime due_start = -1;
  SimTime think = -1;              // the pause after its session's previous turn (-1: none)
  std::int32_t session_turns = 0;  // turns its session has in the workload, routed or not (0: unknown)
  PromptLayout prompt;             // prompt.input_tokens == 0: the prompt's make-up is not known
  bool known() const { return input_tokens >= 0; }
};

struct RouteDecision {
  RequestId request = 0;
  SessionId session = 0;
  std::int32_t turn = 0;
  std::string policy;
  WorkerId chosen = kNoWorker;
  bool lower_is_better = false;
  std::vector<CandidateScore> candidates;
  // Decision-wide fields a policy reports beside its candidates' components (unified-gated:
  // affinity or fallback, the affinity's cache ratio, the average num_requests, the tie-break used).
  std::uint8_t num_fields = 0;
  std::array<ScoreComponent, 6> fields{};
  void addField(const char* name, double value) {
    if (num_fields < fields.size()) fields[num_fields++] = {name, value};
  }
  double field(const char* name) const;  // NaN when absent
  RequestShape shape;                    // what the request was (RecordingWorkload); last: not kept by views
};

struct Admission {
  RequestId request = 0;
  SessionId session = 0;
  WorkerId worker = kNoWorker;
  AdmissionResult result = AdmissionResult::Admitted;
  RoutePath path = RoutePath::Direct;
  std::int64_t tokens = 0;  // tokens the worker must allocate
};

struct SeedStarted {  // a seed or reseed dispatched to P and D
  RequestId request = 0;
  SessionId session = 0;
  std::int32_t prefill = 0;
  WorkerId worker = kNoWorker;
  std::int64_t tokens = 0;
  bool reseed = false;
};

struct TransferStarted {
  RequestId request = 0;
  std::int32_t prefill = 0;
  WorkerId worker = kNoWorker;
  std::int64_t tokens = 0;
  std::int64_t bytes = 0;
  SimTime queue_wait = 0;
};

struct TransferFinished {
  RequestId request = 0;
  std::int32_t prefill = 0;
  WorkerId worker = kNoWorker;
  std::int64_t tokens = 0;
  std::int64_t bytes = 0;
  bool ok = true;
  std::string reason;
};

struct Eviction {
  WorkerId worker = kNoWorker;
  SessionId session = 0;  // 0 when blocks of several sessions were freed
  std::int64_t tokens_freed = 0;
  EvictionGranularity granularity = EvictionGranularity::Session;
  std::int32_t sessions_hit = 0;
};

// A decode worker found no KV for its batch's next token, even after evicting idle cache, and took
// requests out of the batch to make room (SGLang's retract_decode: "Decode out of memory happened.
// #retracted_reqs: N, #new_token_ratio: a -> b"). The requests resume when room comes back.
struct Retraction {
  WorkerId worker = kNoWorker;
  std::vector<RequestId> requests;  // in the order retracted
  std::int64_t tokens_freed = 0;
  double new_token_ratio_before = 0;
  double new_token_ratio_after = 0;
};

struct LinkHealth {
  std::int32_t prefill = 0;
  WorkerId worker = kNoWorker;
  LinkState state = LinkState::Alive;
  std::string reason;
  std::int32_t aborted_requests = 0;
};

struct WorkerCrashed {
  WorkerId worker = kNoWorker;
  std::string reason;
  std::int32_t aborted_requests = 0;
};

struct WorkerRestarted {
  WorkerId worker = kNoWorker;
};

struct Correction {  // the streaming-session extend_input_len correction (ARCHITECTURE.md D6, mode D)
  WorkerId worker = kNoWorker;
  RequestId request = 0;
  SessionId session = 0;
  std::int64_t fill_len = 0;
  std::int64_t prefix_len = 0;
  std::int64_t kv_committed_len = 0;
  CorrectionFault fault = CorrectionFault::Crash;
};

struct RequestDone {
  RequestId request = 0;
  SessionId session = 0;
  std::int32_t turn = 0;
  WorkerId worker = kNoWorker;
  RoutePath path = RoutePath::Direct;
  RequestStatus status = RequestStatus::Ok;
  SimTime ttft = -1;  // -1: no token was produced
  SimTime e2e = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::string error;
  // Prompt tokens served from the worker's prefix cache, as the engine counts its hits (vLLM's
  // prefix_cache_hits); -1 when the source does not know.
  std::int64_t cached_tokens = -1;
  // What an unbounded cache would have hit on the same requests: the longest prefix of the prompt
  // any earlier request of this session (intra) or of any session (any) sent; -1: unknown.
  std::int64_t ceiling_intra_tokens = -1;
  std::int64_t ceiling_any_tokens = -1;
  // When the request was fired minus its trace time (the lab's dispatch slip); 0 when unknown.
  SimTime dispatch_slip = 0;
};

struct KnobChanged {
  std::string name;
  double old_value = 0;
  double new_value = 0;
  std::string who;
  ChangeOrigin origin;  // where a remote change came from, as the server saw it (ChangeAuthor.h)
};

struct PolicyChanged {
  std::string old_policy;
  std::string new_policy;
  std::string who;
  ChangeOrigin origin;
};

// Pause, resume, a new pace or a seek, so every applied control change is in the stream with its
// author (as KnobChanged is). Summaries ignore it: steering the playback changes nothing the run did.
struct RunControlChanged {
  RunAction action = RunAction::Paused;
  double speed = 0;    // the pace in effect after the change (x real time; 0 = as fast as possible)
  SimTime target = 0;  // Seek: the time sought (the event's own time is when it was applied)
  std::string who;
  ChangeOrigin origin;
};

// A live sweep's run marker. The lab's sweep scripts restart the cluster with new
// flags inside one live session; a Start and its End bound one of those runs so it gets its own
// recording and summary. Indices count the session's runs from 1; an End repeats its Start's index,
// name and parameters, so a reader that joins late still knows which run ended.
struct RunMarked {
  RunMarkAction action = RunMarkAction::Start;
  std::uint32_t index = 0;
  std::string name;
  std::vector<std::pair<std::string, std::string>> parameters;  // as the script gave them, in order
  std::string who;
  ChangeOrigin origin;
};

// A live worker's health changed (a scrape failed, answered garbage or slowly, or recovered). In the
// stream, not only in the live session's status, so a console attached from elsewhere shows it too.
struct WorkerHealthChanged {
  std::string worker;  // by name: prefill workers have no WorkerId ("D1", "P0")
  WorkerHealth health = WorkerHealth::Unknown;
  std::string reason;  // why degraded or unreachable; empty when ok
};

struct WorkerGauges {
  WorkerId worker = kNoWorker;
  // KV tokens as SGLang's scheduler counts them, live and simulated alike:
  // kv_used is upstream's num_used_tokens (= max_total - available - evictable: tokens locked by
  // requests or held by streaming sessions), kv_evictable its kv_evictable_tokens (unlocked radix
  // cache, freed on demand); the pool's free room is kv_capacity - kv_used - kv_evictable.
  std::int64_t kv_used = 0;
  std::int64_t kv_capacity = 0;
  std::int64_t kv_peak = 0;  // highest kv_used since the previous snapshot (so spikes survive)
  std::int32_t running = 0;
  std::int32_t queued = 0;
  std::int32_t resident_sessions = 0;
  std::int32_t bindings = 0;  // sessions bound to this worker by the router
  std::int32_t pending_seeds = 0;
  bool alive = true;
  std::int64_t kv_evictable = 0;     // 0 also when the worker does not export it (SGLang before v0.5.11)
  std::int64_t retracted_total = 0;  // requests retracted so far (sglang:num_retracted_requests_total)
  // Times the simulated pool held more than its capacity (a simulator bug; always 0 when live).
  std::int64_t kv_capacity_violations = 0;
  // Live router: requests routed here and forgotten with no report (unreported_expiry_s or a
  // max_tracked_* cap), so far.
  std::int64_t expired_unreported = 0;
  // Live router: requests routed here still waiting for their report (each counts as load until it
  // comes or expires): the part of the load only the client's word can clear.
  std::int64_t awaiting_report = 0;
  // Live: the blocks the worker's engine says it holds, from its KV events (0 without a feed).
  std::int64_t kv_event_blocks = 0;
  // Live: GPU-tier blocks the engine's KV events stored and removed (evictions and clears) since
  // KVScope attached: their rates are the cache's churn.
  std::int64_t kv_event_stored = 0;
  std::int64_t kv_event_removed = 0;
  // Live: the engine's own prefix-cache counters, in prompt tokens, since KVScope started watching
  // (SGLang's prompt/cached tokens, vLLM's prefix_cache_queries/hits and, for a KV connector's
  // cross-instance cache, external_prefix_cache_*): hit / queried is the hit rate the lab calls APC.
  // 0 in the twin and when the engine does not export them.
  std::int64_t prefix_queried_tokens = 0;
  std::int64_t prefix_hit_tokens = 0;
  std::int64_t external_queried_tokens = 0;
  std::int64_t external_hit_tokens = 0;
};

struct LinkGauges {
  std::int32_t prefill = 0;
  WorkerId worker = kNoWorker;
  std::int32_t queue_depth = 0;
  std::int64_t bytes_in_flight = 0;
  LinkState state = LinkState::Alive;
};

struct Snapshot {
  std::vector<WorkerGauges> workers;
  std::vector<LinkGauges> links;
};

struct RunFinished {
  RunFinished(bool done = true, std::vector<std::string> source_notes = {})
      : completed(done), notes(std::move(source_notes)) {}
  bool completed = true;  // false when stopped early
  // What the source read but could not use, for the report: a log import's or a live session's
  // unknown line shapes and malformed lines ("d0.log: 12 lines like \"Xyz batch. #foo: <n>\"").
  std::vector<std::string> notes;
  static constexpr std::size_t kMaxNotes = 64;
};

using EventPayload =
    std::variant<RunStarted, RouteDecision, Admission, SeedStarted, TransferStarted, TransferFinished, Eviction,
                 LinkHealth, WorkerCrashed, WorkerRestarted, Correction, RequestDone, KnobChanged, PolicyChanged,
                 Snapshot, RunFinished, RunControlChanged, RunMarked, WorkerHealthChanged, Retraction>;

struct Event {
  std::uint64_t seq = 0;
  SimTime time = 0;
  EventPayload payload;
};

// The kind's stable name ("route", "eviction", ...), as used in filters, JSONL and the UI.
const char* eventKindName(const EventPayload&);

// Anything that consumes the stream: the summary collector, the diagnosis engine, writers, the GUI.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void onEvent(const Event& e) = 0;
  // The producer has ended a batch (a Report call, a snapshot tick): a writer that buffers hands what
  // it holds to the OS now, so a process killed right after keeps it. Same thread as onEvent().
  virtual void flush() {}
};

}  // namespace kvscope
