#include "core/run/LiveRouter.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <absl/container/flat_hash_set.h>

#include "core/model/Error.h"
#include "core/model/Overloaded.h"
#include "core/router/ObservationCheck.h"
#include "core/router/PolicyRegistry.h"
#include "core/run/BackgroundWork.h"

namespace kvscope {

namespace {
// The scope of the block chains a routed request's shape names: one for every session, so equal
// block hashes stay equal prefixes when the twin expands them.
constexpr std::uint64_t kRoutedScope = 0x726f75746564ULL;

std::int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Checked before any member is built, so a bad spec never half-constructs a router.
const LiveClusterSpec& checked(const LiveClusterSpec& spec) {
  if (spec.workers.empty() || spec.workers.size() > static_cast<std::size_t>(kMaxWorkers))
    throw InputError("cluster: expected 1.." + std::to_string(kMaxWorkers) + " decode workers, got " +
                     std::to_string(spec.workers.size()));
  if (spec.prefill.size() > static_cast<std::size_t>(kMaxPrefillWorkers))
    throw InputError("cluster: at most " + std::to_string(kMaxPrefillWorkers) + " prefill workers");
  std::set<std::string> names;
  for (const auto* list : {&spec.workers, &spec.prefill})
    for (const WorkerInfo& w : *list)
      if (w.name.empty() || !names.insert(w.name).second)
        throw InputError("cluster: worker name '" + w.name + "' is empty or given twice");
  if (spec.block_size <= 0)
    throw InputError("cluster: block_size must be positive, got " + std::to_string(spec.block_size));
  if (!makePolicy(spec.policy)) throw InputError("cluster: unknown policy '" + spec.policy + "'");
  return spec;
}
}  // namespace

LiveRouter::LiveRouter(LiveClusterSpec spec, std::vector<EventSink*> sinks)
    : spec_(checked(spec)),
      sinks_(std::move(sinks)),
      standalone_(true),
      start_ns_(steadyNs()),
      router_(static_cast<int>(spec_.workers.size()), spec_.block_size, knobs_, 0),
      loads_(spec_.workers.size()),
      unreported_(static_cast<int>(spec_.workers.size())) {
  publish_ = [this](EventPayload payload) {
    const Event e{seq_++, now(), std::move(payload)};
    for (EventSink* sink : sinks_) sink->onEvent(e);
    return e.seq;
  };
  flush_ = [this] {
    for (EventSink* sink : sinks_) sink->flush();
  };
  init();
  RunStarted run;
  run.scenario = spec_.name;
  run.policy = spec_.policy;
  run.profile = "live";
  run.workers = spec_.workers;
  run.prefill = spec_.prefill;
  run.rho = knobs_.get(KnobId::Rho);
  for (const KnobSpec& k : KnobRegistry::specs()) run.knobs.emplace_back(std::string(k.name), knobs_.get(k.id));
  {
    std::lock_guard lock(mutex_);
    publishLocked(std::move(run));
  }
  ticker_ = std::thread([this] {
    std::unique_lock lock(ticker_mutex_);
    while (!ticker_wake_.wait_for(lock, std::chrono::seconds(1), [this] { return ticker_stop_; })) publishSnapshot();
  });
}

LiveRouter::LiveRouter(LiveClusterSpec spec, Publisher publish, std::function<void()> flush)
    : spec_(checked(spec)),
      publish_(std::move(publish)),
      flush_(std::move(flush)),
      standalone_(false),
      start_ns_(steadyNs()),
      router_(static_cast<int>(spec_.workers.size()), spec_.block_size, knobs_, 0),
      loads_(spec_.workers.size()),
      unreported_(static_cast<int>(spec_.workers.size())) {
  init();
}

void LiveRouter::init() {
  noted_ = std::make_unique<std::atomic<int>[]>(loads_.size());
  expired_.assign(loads_.size(), 0);
  if (const auto r = knobs_.apply(spec_.knobs, "cluster"); !r.ok) throw InputError("cluster: " + r.error);
  router_.setPolicy(spec_.policy);
  for (std::size_t i = 0; i < loads_.size(); ++i) loads_[i].load.kv_capacity = spec_.workers[i].kv_capacity_tokens;
  for (const auto& w : spec_.workers) capacity_.push_back(w.kv_capacity_tokens);
}

LiveRouter::~LiveRouter() { stop(); }

void LiveRouter::stop() {
  {
    std::lock_guard lock(ticker_mutex_);
    ticker_stop_ = true;
  }
  ticker_wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  closeOpenRun();
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  stopped_ = true;
  if (standalone_) publishLocked(RunFinished{false});
}

SimTime LiveRouter::now() const { return (steadyNs() - start_ns_) / 1000; }

std::uint64_t LiveRouter::publishLocked(EventPayload payload) { return publish_(std::move(payload)); }

void LiveRouter::flush() {
  std::lock_guard lock(mutex_);
  if (!stopped_ && flush_) flush_();
}

void LiveRouter::publishMark(const RunMarked& mark) {
  std::lock_guard lock(mutex_);
  if (!stopped_) publishLocked(mark);
}

void LiveRouter::noteWorkerCrashed(WorkerId worker) {
  if (worker >= 0 && worker < static_cast<WorkerId>(loads_.size())) noted_[static_cast<std::size_t>(worker)] = 1;
}

void LiveRouter::noteWorkerRestarted(WorkerId worker) {
  if (worker >= 0 && worker < static_cast<WorkerId>(loads_.size())) noted_[static_cast<std::size_t>(worker)] = 2;
}

void LiveRouter::applyNotesLocked() {
  for (std::size_t w = 0; w < loads_.size(); ++w) {
    const int note = noted_[w].exchange(0);
    if (note == 1) applyLocked(WorkerCrashed{static_cast<WorkerId>(w), {}, 0});
    if (note == 2) applyLocked(WorkerRestarted{static_cast<WorkerId>(w)});
  }
}

LiveRouter::RouteResult LiveRouter::route(const RouteInput& in) {
  std::lock_guard lock(mutex_);
  applyNotesLocked();
  // A repeated id (a client retrying after a timeout) replaces its earlier routing, load and all.
  if (in_flight_.contains(in.request) || unreported_.contains(in.request)) {
    finishRequestLocked(in.request);
    ++replaced_;
  }
  forgetUnreportedLocked();
  session_seen_[in.session] = now();
  decide_loads_.resize(loads_.size());
  for (std::size_t w = 0; w < loads_.size(); ++w) {
    decide_loads_[w] = loads_[w].load;
    decide_loads_[w].assigned_sessions = router_.assignedSessions(static_cast<WorkerId>(w));
    decide_loads_[w].assignments = router_.assignments(static_cast<WorkerId>(w));
  }
  // A worker the router did not offer is no candidate: the policies skip dead workers.
  if (!in.candidates.empty()) {
    std::vector<bool> offered(loads_.size(), false);
    for (WorkerId w : in.candidates) offered[static_cast<std::size_t>(w)] = true;
    for (std::size_t w = 0; w < loads_.size(); ++w) decide_loads_[w].alive &= offered[w];
  }
  RouteResult out;
  const RouteRequest request{in.request, in.session, in.turn,
                             static_cast<std::int32_t>(std::min<std::int64_t>(in.input_tokens, INT32_MAX)), in.hashes};
  router_.decide(request, decide_loads_, out.decision);
  // What the request was, for running this traffic in the twin later (RecordingWorkload): its size
  // and the blocks the router saw, as a source chain in the router's block size; its output is
  // known only when it is reported done, its trace time is now.
  RequestShape& shape = out.decision.shape;
  shape.input_tokens = std::max<std::int64_t>(0, in.input_tokens);
  shape.trace_time = now();
  shape.prompt = PromptLayout{};
  if (!in.hashes.empty() && in.input_tokens > 0) {
    shape.prompt.input_tokens = static_cast<std::int32_t>(std::min<std::int64_t>(in.input_tokens, INT32_MAX));
    shape.prompt.source_block_size = spec_.block_size;
    shape.prompt.source_hashes.assign(in.hashes.begin(), in.hashes.end());
    shape.prompt.session_scope = kRoutedScope;
    shape.prompt.unique_scope = in.request;
  }
  const WorkerId chosen = out.decision.chosen;
  if (chosen != kNoWorker) {
    // The simulator's path rule (AdmissionFlow::choosePath), with what the cluster reported.
    const std::int64_t cached =
        static_cast<std::int64_t>(router_.lastMatch().prefix_blocks[static_cast<std::size_t>(chosen)]) *
        spec_.block_size;
    const auto resident = resident_.find(in.session);
    if (in.turn < knobs_.getInt(KnobId::SeedMinTurnId))
      out.path = RoutePath::Transient;
    else if (resident != resident_.end() && resident->second == chosen &&
             in.input_tokens - std::min(in.input_tokens, cached) <= knobs_.getInt(KnobId::DirectMaxUncachedTokens))
      out.path = RoutePath::Direct;
    else
      out.path = seeded_.contains(in.session) ? RoutePath::Reseed : RoutePath::Seed;
    if (out.path != RoutePath::Transient) {
      if (out.path != RoutePath::Direct) seeded_[in.session] = true;
      setResidentLocked(in.session, chosen);
    }
    router_.bind(in.session, chosen);
    router_.track(in.request, chosen, in.hashes, in.input_tokens);
    in_flight_[in.request] =
        InFlight{chosen, Stage::Routed, out.path == RoutePath::Seed || out.path == RoutePath::Reseed};
    unreported_.routed(in.request, chosen, now(), in.hashes.size());
    ++loads_[static_cast<std::size_t>(chosen)].load.queued;
  }
  out.seq = publishLocked(out.decision);
  return out;
}

void LiveRouter::setResidentLocked(SessionId session, WorkerId worker) {
  auto [it, fresh] = resident_.try_emplace(session, worker);
  if (!fresh) {
    if (it->second == worker) return;
    if (it->second != kNoWorker) --loads_[static_cast<std::size_t>(it->second)].resident_sessions;
    it->second = worker;
  }
  if (worker != kNoWorker) ++loads_[static_cast<std::size_t>(worker)].resident_sessions;
}

bool LiveRouter::checkWorker(WorkerId w, const char* field, std::string* error) const {
  if (w >= 0 && w < static_cast<WorkerId>(loads_.size())) return true;
  if (error)
    *error = std::string(field) + ": " + std::to_string(w) + " is not a decode worker (0.." +
             std::to_string(loads_.size() - 1) + ")";
  return false;
}

bool LiveRouter::observe(EventPayload payload, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  auto prefillOk = [&](std::int32_t p, const char* field) {
    if (p >= 0 && p < static_cast<std::int32_t>(std::max<std::size_t>(1, spec_.prefill.size()))) return true;
    return fail(std::string(field) + ": " + std::to_string(p) + " is not a prefill worker");
  };
  const bool ok = std::visit(
      Overloaded{
          [&](const Admission& a) { return a.worker == kNoWorker || checkWorker(a.worker, "admission.worker", error); },
          [&](const SeedStarted& s) {
            return prefillOk(s.prefill, "seed.prefill") && checkWorker(s.worker, "seed.worker", error);
          },
          [&](const TransferStarted& t) {
            return prefillOk(t.prefill, "transfer_start.prefill") &&
                   checkWorker(t.worker, "transfer_start.worker", error);
          },
          [&](const TransferFinished& t) {
            return prefillOk(t.prefill, "transfer_end.prefill") && checkWorker(t.worker, "transfer_end.worker", error);
          },
          [&](const Eviction& e) { return checkWorker(e.worker, "eviction.worker", error); },
          [&](const LinkHealth& l) {
            return prefillOk(l.prefill, "link.prefill") && checkWorker(l.worker, "link.worker", error);
          },
          [&](const WorkerCrashed& c) { return checkWorker(c.worker, "crash.worker", error); },
          [&](const WorkerRestarted& r) { return checkWorker(r.worker, "restart.worker", error); },
          [&](const Correction& c) { return checkWorker(c.worker, "correction.worker", error); },
          [&](const RequestDone& d) {
            return d.worker == kNoWorker || checkWorker(d.worker, "request_done.worker", error);
          },
          [&](const auto&) {
            return fail(std::string("event: a ") + eventKindName(payload) +
                        " event is KVScope's own, not an observation");
          },
      },
      payload);
  if (!ok) return false;
  // Worker indices are valid now, so each count can be held against its worker's capacity.
  if (auto why = checkObservationNumbers(payload, {capacity_, maxRequestTokens()})) return fail(*why);
  std::lock_guard lock(mutex_);
  applyLocked(payload);
  publishLocked(std::move(payload));
  return true;
}

void LiveRouter::finishRequestLocked(RequestId request) {
  router_.release(request);
  unreported_.reported(request);
  const auto it = in_flight_.find(request);
  if (it == in_flight_.end()) return;
  WorkerLoad& l = loads_[static_cast<std::size_t>(it->second.worker)].load;
  (it->second.stage == Stage::Routed ? l.queued : l.running) -= 1;
  if (it->second.seeding) l.pending_seeds = std::max(0, l.pending_seeds - 1);
  in_flight_.erase(it);
}

void LiveRouter::applyLocked(const EventPayload& payload) {
  std::visit(Overloaded{
                 [&](const Admission& a) {
                   const auto it = in_flight_.find(a.request);
                   if (a.result != AdmissionResult::Admitted) {
                     // Refused: the session is not there after all; the router will route it again.
                     if (a.worker != kNoWorker && router_.boundWorker(a.session) == a.worker) router_.unbind(a.session);
                     if (resident_.contains(a.session) && resident_[a.session] == a.worker)
                       setResidentLocked(a.session, kNoWorker);
                     finishRequestLocked(a.request);
                     return;
                   }
                   if (it == in_flight_.end() || it->second.stage != Stage::Routed) return;
                   WorkerLoad& l = loads_[static_cast<std::size_t>(it->second.worker)].load;
                   --l.queued;
                   ++l.running;
                   it->second.stage = Stage::Admitted;
                 },
                 [&](const SeedStarted& s) {
                   auto it = in_flight_.find(s.request);
                   if (it != in_flight_.end() && !it->second.seeding) {
                     it->second.seeding = true;
                     ++loads_[static_cast<std::size_t>(s.worker)].load.pending_seeds;
                   } else if (it != in_flight_.end()) {
                     ++loads_[static_cast<std::size_t>(s.worker)].load.pending_seeds;
                   }
                 },
                 [&](const TransferFinished& t) {
                   auto it = in_flight_.find(t.request);
                   if (it == in_flight_.end() || !it->second.seeding) return;
                   it->second.seeding = false;
                   WorkerLoad& l = loads_[static_cast<std::size_t>(it->second.worker)].load;
                   l.pending_seeds = std::max(0, l.pending_seeds - 1);
                 },
                 [&](const Eviction& e) {
                   if (e.session != 0 && resident_.contains(e.session) && resident_[e.session] == e.worker)
                     setResidentLocked(e.session, kNoWorker);
                 },
                 [&](const WorkerCrashed& c) {
                   Load& l = loads_[static_cast<std::size_t>(c.worker)];
                   l.load.alive = false;
                   l.load.kv_used = 0;
                   router_.onWorkerCleared(c.worker);
                   for (auto& [session, worker] : resident_)
                     if (worker == c.worker) setResidentLocked(session, kNoWorker);
                 },
                 [&](const WorkerRestarted& r) { loads_[static_cast<std::size_t>(r.worker)].load.alive = true; },
                 [&](const RequestDone& d) { finishRequestLocked(d.request); },
                 [](const auto&) {},
             },
             payload);
}

bool LiveRouter::blocksStored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes,
                              std::string* error) {
  if (!checkWorker(worker, "blocks_stored.worker", error)) return false;
  std::lock_guard lock(mutex_);
  Load& l = loads_[static_cast<std::size_t>(worker)];
  // The blocks the worker does not hold yet must fit in its pool: a router that stores and never
  // removes (or lies) is refused, never shown holding more than the worker has.
  const std::int64_t at_most = static_cast<std::int64_t>(hashes.size()) * spec_.block_size;  // hashes <= 2^16
  if (l.load.kv_capacity > 0 && l.load.kv_used + at_most > l.load.kv_capacity) {  // counted only when it may matter
    absl::flat_hash_set<BlockHash> fresh;
    for (BlockHash h : hashes)
      if (!router_.index().holds(h, worker)) fresh.insert(h);
    const std::int64_t after = l.load.kv_used + static_cast<std::int64_t>(fresh.size()) * spec_.block_size;
    if (after > l.load.kv_capacity) {
      if (error)
        *error = "blocks_stored.block_hashes: " + std::to_string(fresh.size()) + " new blocks would make " +
                 spec_.workers[static_cast<std::size_t>(worker)].name + " hold " + std::to_string(after) +
                 " tokens, over its KV capacity of " + std::to_string(l.load.kv_capacity) +
                 " (report blocks_removed for the blocks it evicted)";
      return false;
    }
  }
  // Occupancy counts a block once per worker, however often the router hears of it.
  l.load.kv_used += static_cast<std::int64_t>(router_.storeBlocks(worker, session, hashes)) * spec_.block_size;
  l.kv_peak = std::max(l.kv_peak, l.load.kv_used);
  if (session != 0 && !resident_.contains(session)) {
    setResidentLocked(session, worker);
    session_seen_.try_emplace(session, now());  // so it is forgotten too, if never routed again
  }
  return true;
}

bool LiveRouter::blocksRemoved(WorkerId worker, std::span<const BlockHash> hashes, std::string* error) {
  if (!checkWorker(worker, "blocks_removed.worker", error)) return false;
  std::lock_guard lock(mutex_);
  Load& l = loads_[static_cast<std::size_t>(worker)];
  l.load.kv_used = std::max<std::int64_t>(
      0, l.load.kv_used - static_cast<std::int64_t>(router_.removeBlocks(worker, hashes)) * spec_.block_size);
  return true;
}

void LiveRouter::publishSnapshot() {
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  forgetUnreportedLocked();  // also when no request comes
  if (!standalone_) return;  // in a live cluster, the cluster's snapshots hold the gauges
  Snapshot s;
  for (std::size_t w = 0; w < loads_.size(); ++w) {
    Load& l = loads_[w];
    WorkerGauges g;
    g.worker = static_cast<WorkerId>(w);
    g.kv_used = l.load.kv_used;
    g.kv_capacity = l.load.kv_capacity;
    g.kv_peak = std::max(l.kv_peak, l.load.kv_used);
    g.running = l.load.running;
    g.queued = l.load.queued;
    g.resident_sessions = l.resident_sessions;
    g.bindings = router_.assignedSessions(static_cast<WorkerId>(w));
    g.pending_seeds = l.load.pending_seeds;
    g.alive = l.load.alive;
    g.expired_unreported = expired_[w];
    g.awaiting_report = static_cast<std::int64_t>(unreported_.onWorker(static_cast<WorkerId>(w)));
    s.workers.push_back(g);
    l.kv_peak = l.load.kv_used;
  }
  publishLocked(std::move(s));
  flush_();  // a recording is on its way to disk every second
}

LiveRouter::UnreportedCounts LiveRouter::unreportedCounts() const {
  std::lock_guard lock(mutex_);
  UnreportedCounts c{expired_, {}};
  for (std::size_t w = 0; w < expired_.size(); ++w)
    c.awaiting.push_back(static_cast<std::int64_t>(unreported_.onWorker(static_cast<WorkerId>(w))));
  return c;
}

void LiveRouter::forgetUnreportedLocked() {
  const SimTime t = now();
  const UnreportedRequests::Limits limits{secondsToTime(knobs_.get(KnobId::UnreportedExpiryS)),
                                          static_cast<std::size_t>(knobs_.getInt(KnobId::MaxTrackedRequests)),
                                          static_cast<std::size_t>(knobs_.getInt(KnobId::MaxTrackedPerWorker)),
                                          static_cast<std::size_t>(knobs_.getInt(KnobId::MaxTrackedBlockHashes))};
  const std::vector<UnreportedRequests::Due> due = unreported_.due(t, limits);
  for (const auto& d : due) {
    finishRequestLocked(d.request);
    ++expired_[static_cast<std::size_t>(d.worker)];
  }
  // Sessions: swept every few seconds, or at once over the cap (then the least recently routed
  // quarter goes, so the sweep's cost is spread over the routes that filled it).
  std::size_t forgotten = 0;
  const auto cap = static_cast<std::size_t>(knobs_.getInt(KnobId::MaxTrackedSessions));
  if (t >= next_idle_sweep_ || session_seen_.size() > cap) {
    const double idle_s = knobs_.get(KnobId::SessionIdleS);
    next_idle_sweep_ =
        t + secondsToTime(std::min(5.0, idle_s / 2));  // a session is forgotten within 1.5x its idle time
    SimTime cutoff = t - secondsToTime(idle_s);
    if (session_seen_.size() > cap) {
      std::vector<SimTime> seen;
      seen.reserve(session_seen_.size());
      for (const auto& [s, at] : session_seen_) seen.push_back(at);
      const auto quarter = seen.begin() + static_cast<std::ptrdiff_t>(seen.size() / 4);
      std::nth_element(seen.begin(), quarter, seen.end());
      cutoff = std::max(cutoff, *quarter);
    }
    for (auto it = session_seen_.begin(); it != session_seen_.end();) {
      if (it->second > cutoff) {
        ++it;
        continue;
      }
      const SessionId s = it->first;
      router_.unbind(s);
      if (const auto r = resident_.find(s); r != resident_.end()) {
        setResidentLocked(s, kNoWorker);
        resident_.erase(s);
      }
      seeded_.erase(s);
      session_seen_.erase(it++);
      ++forgotten;
    }
  }
  // Flat tables keep their size after erasing: after a purge, shrink them and give the heap back.
  if (due.size() + forgotten >= 1024) {
    unreported_.compact();
    in_flight_.rehash(0);
    session_seen_.rehash(0);
    resident_.rehash(0);
    seeded_.rehash(0);
    router_.compact();
    giveFreeHeapBack();
  }
}

LiveRouter::KnobState LiveRouter::knobStateLocked() const {
  KnobState state;
  state.policy = std::string(router_.policyName());
  for (const KnobSpec& k : KnobRegistry::specs()) state.knobs.emplace_back(std::string(k.name), knobs_.get(k.id));
  return state;
}

LiveRouter::KnobState LiveRouter::knobState() const {
  std::lock_guard lock(mutex_);
  return knobStateLocked();
}

void LiveRouter::notifyKnobs(const KnobState& state) {
  for (auto& [id, callback] : watchers_) callback(state);
}

int LiveRouter::watchKnobs(std::function<void(const KnobState&)> callback) {
  std::lock_guard watchers(watchers_mutex_);
  if (watchers_.size() >= kMaxKnobWatchers) return -1;
  callback(knobState());
  watchers_.emplace(next_watcher_, std::move(callback));
  return next_watcher_++;
}

void LiveRouter::unwatchKnobs(int id) {
  std::lock_guard watchers(watchers_mutex_);
  watchers_.erase(id);
}

// Watchers are told outside the router's lock (a Route never waits for them), under their own,
// which also keeps the states they see in the order the changes were made.
void LiveRouter::applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                            std::function<void(KnobRegistry::Result)> done) {
  KnobRegistry::Result result;
  {
    std::lock_guard watchers(watchers_mutex_);
    std::optional<KnobState> state;
    {
      std::lock_guard lock(mutex_);
      result = knobs_.apply(changes, author);
      for (const KnobChanged& c : result.changes) publishLocked(c);
      if (result.ok && !result.changes.empty()) {
        state = knobStateLocked();
        state->who = author.who;
      }
    }
    if (state) notifyKnobs(*state);
  }
  done(std::move(result));
}

void LiveRouter::setPolicy(std::string name, ChangeAuthor author, Done done) {
  bool ok = false;
  {
    std::lock_guard watchers(watchers_mutex_);
    std::optional<KnobState> state;
    {
      std::lock_guard lock(mutex_);
      const std::string old(router_.policyName());
      ok = router_.setPolicy(name);
      if (ok && old != name) {
        publishLocked(PolicyChanged{old, name, author.who, author.origin});
        state = knobStateLocked();
        state->who = author.who;
      }
    }
    if (state) notifyKnobs(*state);
  }
  done(policyResult(ok, name));
}

}  // namespace kvscope
