#include "core/sim/AdmissionFlow.h"

#include <algorithm>

namespace kvscope {

void AdmissionFlow::fillLoads() {
  loads_.resize(ctx_.workers.size());
  for (std::size_t i = 0; i < ctx_.workers.size(); ++i) {
    const DecodeWorker& w = *ctx_.workers[i];
    WorkerLoad& l = loads_[i];
    l.alive = w.alive;
    l.running = static_cast<std::int32_t>(w.running.size() + w.joining.size());
    l.queued = static_cast<std::int32_t>(w.prefill_queue.size() + w.space_waiters.size() + w.seed_slot_waiters.size()) +
               w.pending_seeds;
    l.pending_prefill_tokens = w.pending_prefill_tokens;
    l.ongoing_tokens = w.context_tokens + w.pending_prefill_tokens;
    l.kv_used = w.pool.used();
    l.kv_capacity = w.pool.capacity();
    l.assigned_sessions = ctx_.router.assignedSessions(static_cast<WorkerId>(i));
    l.assignments = ctx_.router.assignments(static_cast<WorkerId>(i));
    l.pending_seeds = w.pending_seeds;
  }
}

void AdmissionFlow::route(SimRequest& r) {
  fillLoads();
  const RouteRequest request{r.id, r.session, r.turn, static_cast<std::int32_t>(r.input), r.hashes, ctx_.now};
  ctx_.router.decide(request, loads_, r.decision);
  ctx_.publish(r.decision);
  if (r.decision.chosen == kNoWorker) {
    ctx_.fail(r.id, "no alive decode worker");
    return;
  }
  r.rank_pos = 0;
  attempt(r, r.decision.chosen);
}

RoutePath AdmissionFlow::choosePath(const SimRequest& r, WorkerId wid) const {
  if (!ctx_.scenario.disaggregated) return RoutePath::Local;
  // vLLM's connector keeps no session on D: every turn is prefilled on P and its KV pulled.
  if (ctx_.scenario.connector == Connector::Vllm) return RoutePath::Seed;
  if (r.turn < ctx_.knobs.getInt(KnobId::SeedMinTurnId)) return RoutePath::Transient;
  const DecodeWorker& w = *ctx_.workers[static_cast<std::size_t>(wid)];
  if (w.pool.hasSession(r.session) && r.input - w.pool.cachedTokensFor(r.session, r.hashes, r.input) <=
                                          ctx_.knobs.getInt(KnobId::DirectMaxUncachedTokens))
    return RoutePath::Direct;
  return ctx_.sessions[r.session_index].ever_seeded ? RoutePath::Reseed : RoutePath::Seed;
}

void AdmissionFlow::attempt(SimRequest& r, WorkerId w) {
  r.worker = w;
  ctx_.router.track(r.id, w, r.hashes, r.input);  // the router's view of the worker's load (Dynamo)
  r.path = choosePath(r, w);
  r.stage = RequestStage::Routing;
  ++r.attempt;
  ctx_.agenda.push(ctx_.now + secondsToTime(ctx_.profile.admission_rpc_s), SimEventType::AdmitRpc, r.id, w, r.attempt);
}

bool AdmissionFlow::applyCorrection(SimRequest& r, DecodeWorker& w) {
  // The lab's fork corrects extend_input_len when a turn reaches D while the session's previous
  // turn is still in D's scheduler; the fix-up leaves `seq_len - pre_len == extend_input_len`
  // violated whenever the committed prefix is longer than the new tokens. Block-level eviction
  // removes this code path (radix match_prefix keeps fill_ids and prefix_indices consistent).
  if (ctx_.scenario.eviction != EvictionGranularity::Session || !w.in_scheduler.contains(r.session)) return false;
  const std::int64_t prefix = w.pool.sessionTokens(r.session);
  const std::int64_t fill = std::max<std::int64_t>(0, r.input - prefix);
  if (prefix <= fill) return false;
  const CorrectionFault fault = ctx_.scenario.correction_fault;
  ctx_.publish(Correction{w.id, r.id, r.session, fill, prefix, prefix, fault});
  if (fault == CorrectionFault::Crash) {
    ctx_.fail(r.id, "worker " + ctx_.workerName(w.id) + " crashed (AssertionError) while scheduling this request");
    crash(w.id, "Scheduler hit an exception: AssertionError: assert seq_len - pre_len == req.extend_input_len");
    return true;
  }
  if (fault == CorrectionFault::Drop) {
    ctx_.fail(r.id, "dropped before batching: streaming-session extend_input_len corrected from " +
                        std::to_string(fill) + " to 0 (prefix_len " + std::to_string(prefix) + ")");
    return true;
  }
  return false;
}

void AdmissionFlow::enforceSoftCap(const SimRequest& r, DecodeWorker& w) {
  // --kvcache-session-soft-cap: a new session on a D at its cap trims the oldest idle ones first.
  const long soft_cap = ctx_.knobs.getInt(KnobId::SessionSoftCap);
  if (soft_cap <= 0 || w.pool.hasSession(r.session)) return;
  while (w.pool.residentSessions() >= soft_cap && w.pool.trimOneSession().sessions_hit > 0) {}
}

std::int64_t AdmissionFlow::seedCached(SimRequest& r, DecodeWorker& w) {
  // A session-level cache keeps the session's tail outside the radix tree, so a (re)seed cannot
  // reuse it: the old tail is released and only radix-shared blocks (the boilerplate) are reused.
  if (w.pool.granularity() == EvictionGranularity::Session && w.pool.hasSession(r.session) &&
      !w.in_scheduler.contains(r.session))
    w.pool.release(r.session);
  return std::min(r.input, w.pool.matchPrefixTokens(r.hashes));
}

void AdmissionFlow::onAdmitRpc(SimRequest& r, WorkerId wid) {
  DecodeWorker& w = ctx_.worker(wid);
  if (!w.alive) {
    ctx_.publish(Admission{r.id, r.session, wid, AdmissionResult::Rejected, r.path, 0});
    reject(r);
    return;
  }
  if (r.path == RoutePath::Direct && applyCorrection(r, w)) return;
  if (ctx_.scenario.connector == Connector::Vllm) {
    // No admission to pass: the proxy sends the turn to P, and D queues it when it arrives.
    r.cached = std::min(r.input, w.pool.matchPrefixTokens(r.hashes));
    admit(r, wid, std::max<std::int64_t>(1, r.input - r.cached), /*forced=*/false);
    return;
  }
  const bool reuse_session = r.path == RoutePath::Direct || r.path == RoutePath::Local;
  r.cached = reuse_session ? w.pool.cachedTokensFor(r.session, r.hashes, r.input) : seedCached(r, w);
  const std::int64_t need = std::max<std::int64_t>(1, r.input - r.cached);
  enforceSoftCap(r, w);
  // Session-level pools admit under rho * capacity and trim later; a radix cache uses the whole
  // pool and evicts LRU leaves synchronously in the allocator, exactly as much as it needs.
  const bool radix = w.pool.granularity() == EvictionGranularity::Block;
  const std::int64_t limit = radix ? w.pool.capacity() : ctx_.pressureLimit(w);
  // A turn prefilled here is scheduled at once, so it must also leave the output reservation its
  // scheduler keeps (DecodeScheduler::roomFor); a seed's prealloc checks its own rule later.
  bool fits = false;
  if (r.path == RoutePath::Direct || r.path == RoutePath::Local) {
    fits = decode_.roomFor(w, r, need, limit, /*evict=*/false);
  } else {
    if (radix) w.pool.makeRoom(need, limit);
    fits = w.pool.fits(need, limit);
  }
  if (!fits && r.path == RoutePath::Local) {
    admit(r, wid, need, /*forced=*/true);  // a plain instance queues the request until room frees up
    return;
  }
  if (!fits) {
    ctx_.publish(Admission{r.id, r.session, wid, AdmissionResult::NoSpace, r.path, need});
    // The prealloc queue notices `available_size() <= 0` and trims one idle session, later.
    if (w.pool.granularity() == EvictionGranularity::Session) w.pool.trimOneSession();
    reject(r);
    return;
  }
  admit(r, wid, need, /*forced=*/false);
}

void AdmissionFlow::admit(SimRequest& r, WorkerId wid, std::int64_t need, bool forced) {
  DecodeWorker& w = ctx_.worker(wid);
  ctx_.publish(Admission{r.id, r.session, wid, AdmissionResult::Admitted, r.path, need});
  ctx_.router.bind(r.session, wid);
  r.worker = wid;
  if (!forced) ctx_.sessions[r.session_index].rejects = 0;  // the migration threshold counts rejects in a row
  if (r.path == RoutePath::Direct || r.path == RoutePath::Local) {
    r.prefix_hit = std::min(r.input, r.cached);  // prefilled here: the worker's own cache hit
    w.pool.lock(r.session);
    r.locked = true;
    r.reserved = need;
    r.prefill_remaining = need;
    if (forced) {
      r.stage = RequestStage::Prealloc;
      w.space_waiters.push_back(r.id);
      decode_.admitWaiters(wid);
      return;
    }
    w.pool.reserve(need);
    r.prealloc_done = true;
    decode_.enqueuePrefill(r);
    return;
  }
  seeds_.start(r);
}

void AdmissionFlow::onSpace(SimRequest& r) {
  if (r.path == RoutePath::Direct || r.path == RoutePath::Local)
    decode_.enqueuePrefill(r);
  else
    seeds_.onPreallocDone(r);
}

void AdmissionFlow::onWorkerLost(SimRequest& r) {
  r.stage = RequestStage::Routing;
  reject(r);
}

void AdmissionFlow::reject(SimRequest& r) {
  ++ctx_.sessions[r.session_index].rejects;
  const double delay_ms =
      ctx_.knobs.get(KnobId::AdmissionBackoffMs) + ctx_.knobs.get(KnobId::AdmissionJitterMs) * ctx_.rng.uniform01();
  ++r.attempt;
  ctx_.agenda.push(ctx_.now + secondsToTime(delay_ms / 1000.0), SimEventType::Fallback, r.id, 0, r.attempt);
}

void AdmissionFlow::onFallback(SimRequest& r) {
  const int next = ctx_.router.nextRetry(r.decision, r.rank_pos);
  if (next >= 0) {
    r.rank_pos = next;
    attempt(r, r.decision.candidates[static_cast<std::size_t>(next)].worker);
    return;
  }
  // No candidate left worth a direct try: fall back to a seed that waits for room (the lab's
  // "no-space -> immediate seed/reseed"), on the session's own D unless migration is due.
  const auto& progress = ctx_.sessions[r.session_index];
  const long threshold = ctx_.knobs.getInt(KnobId::MigrationRejectThreshold);
  WorkerId bound = ctx_.router.boundWorker(r.session);
  if (bound != kNoWorker && !ctx_.worker(bound).alive) bound = kNoWorker;
  WorkerId target = bound;
  const bool migrate = threshold > 0 && progress.rejects >= threshold;
  for (const auto& c : r.decision.candidates) {
    if (target != kNoWorker && !(migrate && target == bound)) break;
    if (c.eligible && ctx_.worker(c.worker).alive && !(migrate && c.worker == bound)) target = c.worker;
  }
  if (target == kNoWorker || !ctx_.worker(target).alive) {
    ctx_.fail(r.id, "no decode worker could admit the request");
    return;
  }
  r.worker = target;
  if (migrate && target != bound) ctx_.sessions[r.session_index].rejects = 0;
  if (!ctx_.scenario.disaggregated)
    r.path = RoutePath::Local;  // a plain instance has no seed path: it queues the request
  else if (r.turn < ctx_.knobs.getInt(KnobId::SeedMinTurnId))
    r.path = RoutePath::Transient;
  else
    r.path = progress.ever_seeded ? RoutePath::Reseed : RoutePath::Seed;
  DecodeWorker& w = ctx_.worker(target);
  enforceSoftCap(r, w);
  r.cached = seedCached(r, w);
  admit(r, target, std::max<std::int64_t>(1, r.input - r.cached), /*forced=*/true);
}

}  // namespace kvscope
