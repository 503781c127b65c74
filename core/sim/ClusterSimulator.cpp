#include "core/sim/ClusterSimulator.h"

#include <algorithm>

#include "core/model/Error.h"
#include "core/model/NumberText.h"
#include "core/trace/BlockChain.h"

namespace kvscope {

namespace {
// An Arrival event's flag: the turn already holds its slot under max_inflight_requests (1: the
// session already holds its slot under max_inflight_sessions).
constexpr std::int32_t kHoldsRequestSlot = 2;
}  // namespace

ClusterSimulator::ClusterSimulator(const Scenario& scenario, Workload workload, std::uint64_t seed, TwinOptions options)
    : workload_(std::move(workload)),
      ctx_(scenario, seed, options.index),
      decode_(ctx_),
      seeds_(ctx_, decode_),
      admission_(ctx_, decode_, seeds_),
      end_(secondsToTime(scenario.workload.wall_deadline_s > 0
                             ? std::min(scenario.duration_s, scenario.workload.wall_deadline_s)
                             : scenario.duration_s)),
      ceiling_(scenario.block_size) {
  const auto& prof = scenario.profile;
  for (int w = 0; w < scenario.decode_workers; ++w) {
    ctx_.workers.push_back(std::make_unique<DecodeWorker>(w, prof.decode_kv_pool_tokens, scenario.block_size,
                                                          scenario.eviction, &ctx_.router));
    ctx_.workers.back()->pool.setEvictionCallback([this, w](const KvPool::EvictionReport& rep) {
      ctx_.publish(Eviction{w, rep.session, rep.tokens_freed, ctx_.scenario.eviction, rep.sessions_hit});
      // A session whose whole cache its D released has no D any more: the router places its next
      // turn as a fresh session's, where the load floor acts again (seed 001 3.2: E3's 90 session
      // evictions hit 25 of 50 sessions, and seed 000 puts 30 of E3's 50 sessions on D2; the lab's
      // replayer marks a session not open on its D when D turns it away, agentic-pd-hybrid f6d6dc01).
      if (ctx_.scenario.eviction == EvictionGranularity::Session && rep.session != 0 &&
          ctx_.router.boundWorker(rep.session) == w)
        ctx_.router.unbind(rep.session);
    });
  }
  for (int p = 0; p < scenario.prefill_workers && scenario.disaggregated; ++p)
    ctx_.prefill.push_back(std::make_unique<PrefillWorker>(p, prof.prefill_kv_pool_tokens, scenario.block_size));
  ctx_.links.assign(ctx_.prefill.size(), std::vector<MooncakeLink>(static_cast<std::size_t>(scenario.decode_workers)));
  ctx_.sessions.resize(workload_.sessions.size());
  for (std::size_t i = 0; i < workload_.sessions.size(); ++i)
    ctx_.sessions[i].turns_left = static_cast<std::int32_t>(workload_.sessions[i].turns.size());
  ctx_.fail = [this](RequestId id, const std::string& error) { failRequest(id, error); };
  ctx_.completed = [this](SimRequest& r) { completeRequest(r); };
  decode_.on_space = [this](SimRequest& r) { admission_.onSpace(r); };
  admission_.crash = [this](WorkerId w, const std::string& reason) { crashWorker(w, reason); };
  seeds_.crash = [this](WorkerId w, const std::string& reason, bool restart) { crashWorker(w, reason, restart); };
}

KnobRegistry::Result ClusterSimulator::applyKnobs(const std::map<std::string, double>& changes,
                                                  const ChangeAuthor& author) {
  auto result = ctx_.knobs.apply(changes, author);
  for (const auto& c : result.changes) ctx_.publish(c);
  return result;
}

bool ClusterSimulator::setPolicy(std::string_view name, const ChangeAuthor& author) {
  const std::string old(ctx_.router.policyName());
  if (!ctx_.router.setPolicy(name)) return false;
  if (old != name) ctx_.publish(PolicyChanged{old, std::string(name), author.who, author.origin});
  return true;
}

double ClusterSimulator::sessionStartSeconds(std::size_t i) const {
  const auto& spec = ctx_.scenario.workload;
  switch (spec.dispatch) {
    case Dispatch::Burst:
      return 0;
    case Dispatch::Closed:
      if (spec.session_start_window_s > 0)
        return spec.session_start_window_s * static_cast<double>(i) / static_cast<double>(workload_.sessions.size());
      break;
    default:
      break;
  }
  return workload_.sessions[i].start_s * spec.time_scale;
}

double ClusterSimulator::traceSeconds(std::size_t session, std::size_t turn) const {
  const Session& s = workload_.sessions[session];
  return (s.start_s + s.turns[turn].offset_s) * ctx_.scenario.workload.time_scale;
}

void ClusterSimulator::warmCaches() {
  Scenario warm = ctx_.scenario;
  warm.policy = warm.workload.warm_start_policy;
  warm.workload.warm_start_policy.clear();
  ClusterSimulator previous(warm, workload_, ctx_.scenario.seed);
  previous.start();
  previous.run();
  for (std::size_t w = 0; w < ctx_.workers.size(); ++w) {
    KvPool& pool = ctx_.workers[w]->pool;
    previous.ctx_.workers[w]->pool.forEachSession(
        [&](SessionId s, std::span<const BlockHash> blocks, std::int64_t tail) {
          pool.commitWithin(s, blocks, static_cast<std::int64_t>(blocks.size()) * pool.blockSize() + tail);
        });
  }
}

void ClusterSimulator::start() {
  if (!ctx_.router.setPolicy(ctx_.scenario.policy))
    throw InputError(ctx_.scenario.file + ": field 'policy': unknown policy '" + ctx_.scenario.policy + "'");
  auto knobs = ctx_.knobs.apply(ctx_.scenario.knobs, "scenario");
  if (!knobs.ok) throw InputError(ctx_.scenario.file + ": field 'knobs': " + knobs.error);
  if (!ctx_.scenario.workload.warm_start_policy.empty()) warmCaches();

  RunStarted started;
  started.scenario = ctx_.scenario.name;
  started.policy = std::string(ctx_.router.policyName());
  started.seed = ctx_.scenario.seed;
  started.profile = ctx_.profile.name;
  started.rho = ctx_.knobs.get(KnobId::Rho);
  for (const auto& w : ctx_.workers)
    started.workers.push_back(WorkerInfo{ctx_.workerName(w->id),
                                         ctx_.scenario.disaggregated ? WorkerRole::Decode : WorkerRole::Unified,
                                         w->pool.capacity()});
  for (const auto& spec : KnobRegistry::specs())
    started.knobs.emplace_back(std::string(spec.name), ctx_.knobs.get(spec.id));
  for (const auto& p : ctx_.prefill)
    started.prefill.push_back(WorkerInfo{"P" + std::to_string(p->id), WorkerRole::Prefill, p->pool.capacity()});
  const auto& spec = ctx_.scenario.workload;
  started.dispatch = toString(spec.dispatch);
  started.offered_requests =
      workload_.offered_requests >= 0 ? workload_.offered_requests : static_cast<std::int64_t>(workload_.turnCount());
  double first = 0, last = 0;
  bool any = false;
  for (std::size_t i = 0; i < workload_.sessions.size(); ++i)
    for (std::size_t k = 0; k < workload_.sessions[i].turns.size(); ++k) {
      const double t = traceSeconds(i, k);
      first = any ? std::min(first, t) : t;
      last = any ? std::max(last, t) : t;
      any = true;
    }
  started.trace_window_s = workload_.trace_window_s >= 0 ? workload_.trace_window_s : last - first;
  ctx_.publish(std::move(started));

  const bool open = spec.dispatch == Dispatch::Open;
  const double end = timeToSeconds(end_);
  for (std::size_t i = 0; i < workload_.sessions.size(); ++i) {
    const auto& s = workload_.sessions[i];
    if (s.turns.empty()) continue;
    // Arrivals past the end of the run are never scheduled (and a huge trace time never overflows).
    if (open) {
      for (std::size_t k = 0; k < s.turns.size(); ++k) {
        const double t = traceSeconds(i, k);
        if (t <= end) ctx_.agenda.push(secondsToTime(t), SimEventType::Arrival, i, static_cast<std::int32_t>(k));
      }
      ctx_.sessions[i].next_turn = static_cast<std::int32_t>(s.turns.size());
    } else {
      const double t0 = sessionStartSeconds(i);
      if (t0 <= end) ctx_.agenda.push(secondsToTime(t0), SimEventType::Arrival, i, 0);
      ctx_.sessions[i].next_turn = 1;
    }
  }
  ctx_.agenda.push(secondsToTime(ctx_.scenario.snapshot_interval_s), SimEventType::Snapshot);
  // Pushed before anything can be scheduled at its time, so it runs first at that instant.
  if (spec.wall_deadline_s > 0 && spec.wall_deadline_s <= ctx_.scenario.duration_s)
    ctx_.agenda.push(end_, SimEventType::Deadline);
}

bool ClusterSimulator::step() {
  if (done()) return false;
  const SimEvent e = ctx_.agenda.pop();
  ctx_.now = e.time;
  dispatch(e);
  return true;
}

void ClusterSimulator::runUntil(SimTime t) {
  const SimTime limit = std::min(t, end_);
  while (!ctx_.agenda.empty() && ctx_.agenda.top().time <= limit) step();
  if (ctx_.now < limit) ctx_.now = limit;
}

void ClusterSimulator::finish(bool completed) {
  if (finished_) return;
  finished_ = true;
  // A recorded run's traffic says what the twin had to model to run it (RecordingWorkload).
  std::vector<std::string> notes;
  for (const auto& m : workload_.modelled) notes.push_back("the twin modelled " + m);
  ctx_.publish(RunFinished{completed, std::move(notes)});
}

void ClusterSimulator::dispatch(const SimEvent& e) {
  auto current = [&](auto&& fn) {
    if (SimRequest* r = ctx_.current(e.id, e.b)) fn(*r);
  };
  switch (e.type) {
    case SimEventType::Arrival:
      if (e.b == kHoldsRequestSlot)
        arrive(static_cast<std::uint32_t>(e.id), e.a);
      else if (e.a == 0 && ctx_.scenario.workload.dispatch != Dispatch::Open)
        startSession(static_cast<std::uint32_t>(e.id), e.b == 1);
      else
        ready(static_cast<std::uint32_t>(e.id), e.a);
      break;
    case SimEventType::AdmitRpc:
      current([&](SimRequest& r) { admission_.onAdmitRpc(r, e.a); });
      break;
    case SimEventType::Fallback:
      current([&](SimRequest& r) { admission_.onFallback(r); });
      break;
    case SimEventType::PrefillDone:
      current([&](SimRequest& r) { seeds_.onPrefillDone(r); });
      break;
    case SimEventType::HandshakeCheck:
      current([&](SimRequest& r) { seeds_.onHandshakeCheck(r); });
      break;
    case SimEventType::SuspectCheck:
      current([&](SimRequest& r) { seeds_.onSuspectCheck(r); });
      break;
    case SimEventType::EgressCheck:
      current([&](SimRequest& r) { seeds_.onEgressCheck(r); });
      break;
    case SimEventType::TransferDone:
      current([&](SimRequest& r) { seeds_.onTransferDone(r); });
      break;
    case SimEventType::Iteration:
      if (ctx_.worker(e.a).epoch == e.b) decode_.onIteration(e.a);
      break;
    case SimEventType::Commit:
      decode_.onCommit(e.id);
      break;
    case SimEventType::Timeout:
      if (SimRequest* r = ctx_.find(e.id); r && r->stage != RequestStage::Finishing)
        failRequest(e.id, r->first_token < 0 ? "client timeout: generate stream ended before producing any token"
                                             : "client timeout: response not finished in time");
      break;
    case SimEventType::LinkRecover:
      seeds_.onLinkRecover(e.a, e.b);
      break;
    case SimEventType::WorkerRestart:
      restartWorker(e.a);
      break;
    case SimEventType::Snapshot:
      snapshot();
      break;
    case SimEventType::Deadline:
      wallDeadline();
      break;
  }
}

void ClusterSimulator::startSession(std::uint32_t si, bool admitted) {
  if (deadline_passed_) return;
  const long cap = ctx_.scenario.workload.max_inflight_sessions;
  if (cap > 0 && !admitted) {
    // The lab's replayer takes a session semaphore before the first turn and holds it to the last.
    if (sessions_in_flight_ >= cap) {
      waiting_sessions_.push_back(si);
      return;
    }
    ++sessions_in_flight_;
  }
  ready(si, 0);
}

void ClusterSimulator::ready(std::uint32_t si, std::int32_t ti) {
  if (deadline_passed_) return;
  const long cap = ctx_.scenario.workload.max_inflight_requests;
  if (cap > 0) {
    // The replayer's semaphore around each request: a turn waits for a slot, in the order turns
    // became ready, and its latencies count from when it is sent.
    if (requests_in_flight_ >= cap) {
      waiting_requests_.emplace_back(si, ti);
      return;
    }
    ++requests_in_flight_;
  }
  arrive(si, ti);
}

void ClusterSimulator::wallDeadline() {
  // The lab's REPLAY_MAX_DURATION: what has not finished by now counts as not completed.
  deadline_passed_ = true;
  std::vector<RequestId> open;
  for (const auto& [id, r] : ctx_.requests)
    if (r.stage != RequestStage::Finishing) open.push_back(id);
  std::sort(open.begin(), open.end());  // hash-map order is not deterministic across builds
  const std::string error = "wall deadline: not completed by " + shortestText(timeToSeconds(ctx_.now)) + " s";
  for (RequestId id : open) failRequest(id, error);
}

void ClusterSimulator::arrive(std::uint32_t si, std::int32_t ti) {
  if (deadline_passed_) return;
  const Session& s = workload_.sessions[si];
  const Turn& turn = s.turns[static_cast<std::size_t>(ti)];
  const RequestId id = next_request_++;
  SimRequest& r = ctx_.requests[id];
  r.id = id;
  r.session = s.id;
  r.session_index = si;
  r.turn = ti + 1;
  r.arrival = ctx_.now;
  r.trace_time = secondsToTime(traceSeconds(si, static_cast<std::size_t>(ti)));
  r.input = turn.prompt.input_tokens;
  r.output = std::max<std::int32_t>(1, turn.output_tokens);
  expandBlockHashes(turn.prompt, ctx_.scenario.block_size, r.hashes);
  // The request as it was due, so a recording of this run is a workload (RecordingWorkload): its
  // trace time as this run scaled it, and the slot a start window gave the session's first turn.
  RequestShape& shape = r.decision.shape;
  shape.input_tokens = r.input;
  shape.output_tokens = turn.output_tokens;
  shape.trace_time = r.trace_time;
  const auto& spec = ctx_.scenario.workload;
  if (ti == 0 && spec.dispatch == Dispatch::Closed && spec.session_start_window_s > 0)
    shape.due_start = secondsToTime(sessionStartSeconds(si));
  shape.think = secondsToTime(turn.think_s);
  shape.session_turns = static_cast<std::int32_t>(s.turns.size());
  shape.prompt = turn.prompt;
  const PrefixCeiling::Hit ceiling = ceiling_.observe(s.id, r.hashes, r.input, r.output);
  r.ceiling_intra = ceiling.intra_tokens;
  r.ceiling_any = ceiling.any_tokens;
  ctx_.agenda.push(ctx_.now + secondsToTime(ctx_.knobs.get(KnobId::RequestTimeoutS)), SimEventType::Timeout, id);
  admission_.route(r);
}

void ClusterSimulator::turnEnded(const SimRequest& r) {
  auto& progress = ctx_.sessions[r.session_index];
  const auto& spec = ctx_.scenario.workload;
  if (spec.max_inflight_requests > 0) {
    --requests_in_flight_;
    if (!waiting_requests_.empty() && !deadline_passed_) {  // the next waiting turn takes the slot now
      const auto [si, ti] = waiting_requests_.front();
      waiting_requests_.pop_front();
      ++requests_in_flight_;
      ctx_.agenda.push(ctx_.now, SimEventType::Arrival, si, ti, kHoldsRequestSlot);
    }
  }
  if (--progress.turns_left == 0) {
    ctx_.router.unbind(r.session);
    ceiling_.endSession(r.session);
    if (spec.max_inflight_sessions > 0 && spec.dispatch != Dispatch::Open) {
      --sessions_in_flight_;
      if (!waiting_sessions_.empty()) {  // the next waiting session takes the slot now
        ++sessions_in_flight_;
        ctx_.agenda.push(ctx_.now, SimEventType::Arrival, waiting_sessions_.front(), 0, /*admitted=*/1);
        waiting_sessions_.pop_front();
      }
    }
  }
  const Session& s = workload_.sessions[r.session_index];
  if (spec.dispatch == Dispatch::Open || progress.next_turn >= static_cast<std::int32_t>(s.turns.size())) return;
  const auto k = static_cast<std::size_t>(progress.next_turn);
  SimTime at = ctx_.now;
  switch (spec.dispatch) {
    case Dispatch::Closed:
    case Dispatch::ThinkTime:
      at += secondsToTime(s.turns[k].think_s);
      break;
    case Dispatch::TraceTs:
      at = std::max(at, secondsToTime(traceSeconds(r.session_index, k)));
      break;
    default:
      break;  // burst: at once
  }
  ctx_.agenda.push(at, SimEventType::Arrival, r.session_index, progress.next_turn);
  ++progress.next_turn;
}

void ClusterSimulator::completeRequest(SimRequest& r) {
  ctx_.publish(RequestDone{r.id,
                           r.session,
                           r.turn,
                           r.worker,
                           r.path,
                           RequestStatus::Ok,
                           r.first_token - r.arrival,
                           ctx_.now - r.arrival,
                           r.input,
                           r.output,
                           {},
                           r.prefix_hit,
                           r.ceiling_intra,
                           r.ceiling_any,
                           r.arrival - r.trace_time});
  r.stage = RequestStage::Finishing;
  ++r.attempt;
  ctx_.router.release(r.id);
  const SimTime lag = std::max<SimTime>(1, ctx_.worker(r.worker).last_iteration);
  ctx_.agenda.push(ctx_.now + lag, SimEventType::Commit, r.id);
  turnEnded(r);
}

void ClusterSimulator::failRequest(RequestId id, const std::string& error) {
  SimRequest* r = ctx_.find(id);
  if (!r) return;
  const WorkerId w = r->worker;
  ctx_.router.release(id);
  seeds_.detach(*r);
  decode_.remove(*r);
  if (r->stage != RequestStage::Finishing) {
    ctx_.publish(RequestDone{r->id, r->session, r->turn, w, r->path, RequestStatus::Failed,
                             r->first_token >= 0 ? r->first_token - r->arrival : -1, ctx_.now - r->arrival, r->input,
                             r->output, error, -1, r->ceiling_intra, r->ceiling_any, r->arrival - r->trace_time});
    turnEnded(*r);
  }
  ctx_.requests.erase(id);
  if (w != kNoWorker) decode_.admitWaiters(w);
}

void ClusterSimulator::crashWorker(WorkerId wid, const std::string& reason, bool restart) {
  DecodeWorker& w = ctx_.worker(wid);
  if (!w.alive) return;
  // Requests the worker had taken die with it; those the router still holds (an admission RPC in
  // flight, a backoff, a seed waiting for its budget slot) are re-routed instead.
  std::vector<RequestId> victims, held;
  for (const auto& [id, r] : ctx_.requests) {
    if (r.worker != wid) continue;
    if (r.stage == RequestStage::WaitingSeedSlot)
      held.push_back(id);
    else if (r.stage != RequestStage::Routing)
      victims.push_back(id);
  }
  std::sort(victims.begin(), victims.end());  // hash-map order is not deterministic across builds
  std::sort(held.begin(), held.end());
  w.alive = false;
  ctx_.publish(WorkerCrashed{wid, reason, static_cast<std::int32_t>(victims.size())});
  for (RequestId id : victims) failRequest(id, "worker " + ctx_.workerName(wid) + " crashed: " + reason);
  w.pool.clear();
  decode_.reset(wid);
  for (RequestId id : held) admission_.onWorkerLost(ctx_.requests.at(id));
  for (std::size_t p = 0; p < ctx_.prefill.size(); ++p)
    seeds_.markDead(static_cast<std::int32_t>(p), wid,
                    "remote mooncake session " + ctx_.workerName(wid) + " is not alive");
  if (restart)
    ctx_.agenda.push(ctx_.now + secondsToTime(ctx_.profile.worker_restart_s), SimEventType::WorkerRestart, 0, wid);
}

void ClusterSimulator::restartWorker(WorkerId wid) {
  DecodeWorker& w = ctx_.worker(wid);
  w.alive = true;
  ctx_.publish(WorkerRestarted{wid});
  for (std::size_t p = 0; p < ctx_.prefill.size(); ++p) seeds_.onLinkRecover(static_cast<std::int32_t>(p), wid);
}

std::vector<ClusterSimulator::PoolCheck> ClusterSimulator::poolChecks() const {
  std::vector<PoolCheck> out;
  for (const auto& w : ctx_.workers)
    out.push_back(PoolCheck{ctx_.workerName(w->id), w->pool.capacity(), w->pool.peakEver(),
                            w->pool.capacityViolations(), w->retractions});
  for (const auto& p : ctx_.prefill)
    out.push_back(PoolCheck{"P" + std::to_string(p->id), p->pool.capacity(), p->pool.peakEver(),
                            p->pool.capacityViolations(), 0});
  return out;
}

ClusterSimulator::MemoryUse ClusterSimulator::memoryUse() const {
  MemoryUse m;
  m.index_bytes = ctx_.router.indexBytes();
  m.index_blocks = ctx_.router.indexBlocks();
  for (const auto& w : ctx_.workers) {
    m.pool_bytes += w->pool.memoryBytes();
    m.pool_blocks += w->pool.residentBlocks();
  }
  return m;
}

void ClusterSimulator::snapshot() {
  Snapshot snap;
  // Sized up front: a gauge per P and D link is 32K a snapshot at 64 P x 512 D, which growing by
  // doubling reached through 15 allocations and a copy of each gauge.
  snap.workers.reserve(ctx_.workers.size());
  std::size_t links = 0;
  for (const auto& row : ctx_.links) links += row.size();
  snap.links.reserve(links);
  for (const auto& w : ctx_.workers) {
    snap.workers.push_back(WorkerGauges{
        w->id, w->pool.heldTokens(), w->pool.capacity(), w->pool.heldPeakSinceReset(),
        static_cast<std::int32_t>(w->running.size() + w->joining.size()),
        static_cast<std::int32_t>(w->prefill_queue.size() + w->space_waiters.size() + w->seed_slot_waiters.size()),
        w->pool.residentSessions(), ctx_.router.assignedSessions(w->id), w->pending_seeds, w->alive,
        w->pool.evictableTokens(), w->retractions, w->pool.capacityViolations()});
    w->pool.resetPeak();
  }
  for (std::size_t p = 0; p < ctx_.links.size(); ++p)
    for (std::size_t d = 0; d < ctx_.links[p].size(); ++d) {
      const MooncakeLink& l = ctx_.links[p][d];
      snap.links.push_back(LinkGauges{static_cast<std::int32_t>(p), static_cast<WorkerId>(d), l.queue_depth,
                                      l.bytes_in_flight, l.state});
    }
  ctx_.publish(std::move(snap));
  ctx_.agenda.push(ctx_.now + secondsToTime(ctx_.scenario.snapshot_interval_s), SimEventType::Snapshot);
}

}  // namespace kvscope
