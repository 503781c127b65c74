#include "core/sim/DecodeScheduler.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

void DecodeScheduler::enqueuePrefill(SimRequest& r) {
  DecodeWorker& w = ctx_.worker(r.worker);
  r.stage = RequestStage::Prefilling;
  w.prefill_queue.push_back(r.id);
  w.pending_prefill_tokens += r.prefill_remaining;
  ++w.in_scheduler[r.session];
  if (!w.iterating) startIteration(w);
}

void DecodeScheduler::joinBatch(SimRequest& r) {
  DecodeWorker& w = ctx_.worker(r.worker);
  r.stage = RequestStage::Running;
  ++w.in_scheduler[r.session];
  if (r.output <= 1) {
    ctx_.completed(r);
    return;
  }
  w.joining.push_back(RunningSlot{r.id, static_cast<std::int32_t>(r.output - 1), 1});
  w.context_tokens += r.input + 1;
  if (!w.iterating) startIteration(w);
}

void DecodeScheduler::startIteration(DecodeWorker& w) {
  w.running.insert(w.running.end(), w.joining.begin(), w.joining.end());
  w.joining.clear();
  w.plan_prefill.clear();
  if (!w.alive) return;
  resumeRetracted(w);
  if (!w.running.empty()) makeDecodeRoom(w);
  // prepare_for_decode: every request in the batch takes the KV slot of the token it makes now.
  w.pool.reserve(static_cast<std::int64_t>(w.running.size()));
  for (RunningSlot& s : w.running) ++s.kv;
  const auto& prof = ctx_.profile;
  std::int64_t budget = prof.chunked_prefill_tokens;
  std::int64_t prefill_tokens = 0;
  std::size_t batch = w.running.size();
  double attention = 0;  // the chunks' attention over the context before them (token x token)
  for (RequestId id : w.prefill_queue) {
    if (budget <= 0 || batch >= static_cast<std::size_t>(prof.max_running_requests)) break;
    const SimRequest* r = ctx_.find(id);
    if (!r) continue;
    const std::int64_t take = std::min(budget, r->prefill_remaining);
    w.plan_prefill.emplace_back(id, take);
    budget -= take;
    prefill_tokens += take;
    const double before = static_cast<double>(r->input - r->prefill_remaining);
    attention += static_cast<double>(take) * (before + static_cast<double>(take) / 2);
    ++batch;
  }
  w.plan_decode = w.running.size();
  if (w.plan_decode == 0 && w.plan_prefill.empty()) {
    w.iterating = false;
    return;
  }
  const double seconds =
      prof.decode_iteration_base_s + prof.decode_iteration_per_request_s * static_cast<double>(w.plan_decode) +
      prof.decode_iteration_per_context_token_s * static_cast<double>(w.context_tokens) +
      static_cast<double>(prefill_tokens) / prof.prefill_tokens_per_s + prof.prefill_per_context_token_s * attention;
  const SimTime duration = std::max<SimTime>(1, secondsToTime(seconds));
  w.iterating = true;
  w.last_iteration = duration;
  ctx_.agenda.push(ctx_.now + duration, SimEventType::Iteration, 0, w.id, w.epoch);
}

void DecodeScheduler::onIteration(WorkerId id) {
  DecodeWorker& w = ctx_.worker(id);
  w.iterating = false;
  if (!w.alive) return;
  std::vector<RequestId> finished;
  std::int64_t grown = 0;
  for (std::size_t i = 0; i < w.plan_decode && i < w.running.size(); ++i) {
    RunningSlot& s = w.running[i];
    if (s.id == 0) continue;
    ++s.generated;
    ++grown;
    if (--s.remaining == 0) finished.push_back(s.id);
  }
  w.context_tokens += grown;  // their KV slots were taken when the iteration started

  for (const auto& [rid, take] : w.plan_prefill) {
    SimRequest* r = ctx_.find(rid);
    if (!r || r->stage != RequestStage::Prefilling || r->worker != id) continue;
    r->prefill_remaining -= take;
    w.pending_prefill_tokens -= take;
    if (r->prefill_remaining > 0) continue;
    w.prefill_queue.erase(std::find(w.prefill_queue.begin(), w.prefill_queue.end(), rid));
    if (r->first_token < 0) r->first_token = ctx_.now;  // a retracted request streamed its first token long ago
    r->stage = RequestStage::Running;
    ctx_.router.prefillDone(rid);
    if (r->generated == 0 && r->output <= 1) {
      ctx_.completed(*r);
    } else {
      const std::int32_t generated = std::max<std::int32_t>(1, r->generated);
      w.joining.push_back(RunningSlot{rid, static_cast<std::int32_t>(r->output) - generated, generated});
      w.context_tokens += r->input + generated;
    }
  }
  for (RequestId rid : finished) {
    auto slot = std::find_if(w.running.begin(), w.running.end(), [&](const RunningSlot& s) { return s.id == rid; });
    SimRequest& r = ctx_.requests.at(rid);
    r.reserved += slot->kv;
    w.context_tokens -= r.input + slot->generated;
    slot->id = 0;
    ctx_.completed(r);
  }
  std::erase_if(w.running, [](const RunningSlot& s) { return s.id == 0; });
  // The scheduler looks at its waiting requests on every pass (upstream's event loop), not only
  // when a turn commits: room may have come back through a retraction or a smaller reservation.
  if (!w.space_waiters.empty()) admitWaiters(id);
  if (!w.iterating) startIteration(w);
}

void DecodeScheduler::makeDecodeRoom(DecodeWorker& w) {
  const std::int64_t cap = w.pool.capacity();
  const auto batch = [&](std::size_t n) { return static_cast<std::int64_t>(n); };
  // check_decode_mem: one slot per request, evicting idle cache first (radix leaves, or whole idle
  // sessions as maybe_trim_decode_session_cache does).
  if (!w.pool.fits(batch(w.running.size()), cap)) w.pool.makeRoom(batch(w.running.size()), cap);
  if (w.pool.fits(batch(w.running.size()), cap)) {
    w.new_token_ratio.decay();
    return;
  }
  // retract_decode (schedule_batch.py): sorted by (output so far, -prompt length) descending,
  // popped from the end: the request with the least output goes first, the longest prompt among
  // equals; it stops once the kept requests' next tokens fit, and always keeps one.
  std::vector<std::size_t> order(w.running.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const RunningSlot& x = w.running[a];
    const RunningSlot& y = w.running[b];
    if (x.generated != y.generated) return x.generated > y.generated;
    return ctx_.requests.at(x.id).input < ctx_.requests.at(y.id).input;
  });
  Retraction event{w.id, {}, 0, w.new_token_ratio.value, 0};
  bool first = true;
  while (first || !w.pool.fits(batch(order.size()), cap)) {
    if (order.size() == 1) break;
    first = false;
    RunningSlot& victim = w.running[order.back()];
    order.pop_back();
    event.requests.push_back(victim.id);
    event.tokens_freed += retract(w, victim);
    // release_req evicts at once for retract_decode_steps more tokens of every request kept, and
    // check_decode_mem for their next one.
    const std::int64_t steps = batch(order.size()) * NewTokenRatio::kRetractDecodeSteps;
    if (!w.pool.fits(steps, cap)) w.pool.makeRoom(steps, cap);
  }
  if (!w.pool.fits(batch(order.size()), cap)) {
    // Upstream asserts here ("No space left for only one request"): the pool is full of KV that no
    // running request holds (prefills, transfers). The twin retracts the last one as well.
    RunningSlot& victim = w.running[order.back()];
    order.pop_back();
    event.requests.push_back(victim.id);
    event.tokens_freed += retract(w, victim);
  }
  std::int64_t decoded = 0, max_new = 0;
  for (std::size_t i : order) {
    decoded += w.running[i].generated;
    // The twin knows each turn's real output length; it stands in for the client's max_new_tokens.
    max_new += ctx_.requests.at(w.running[i].id).output;
  }
  w.new_token_ratio.afterRetraction(decoded, static_cast<std::int64_t>(order.size()), max_new);
  event.new_token_ratio_after = w.new_token_ratio.value;
  std::erase_if(w.running, [](const RunningSlot& s) { return s.id == 0; });
  w.retractions += static_cast<std::int64_t>(event.requests.size());
  ctx_.publish(std::move(event));
}

std::int64_t DecodeScheduler::retract(DecodeWorker& w, RunningSlot& slot) {
  SimRequest& r = ctx_.requests.at(slot.id);
  const std::int64_t freed = (r.prealloc_done ? r.reserved : 0) + slot.kv;
  w.pool.unreserve(freed);
  r.reserved = 0;
  r.prealloc_done = false;
  if (r.locked) {  // release_req: its prefix stays in the cache, unlocked (evictable)
    w.pool.unlock(r.session);
    r.locked = false;
  }
  w.context_tokens -= r.input + slot.generated;
  r.generated = slot.generated;
  slot.id = 0;
  if (ctx_.scenario.disaggregated) {
    // PD decode (release_req, disaggregation_mode == "decode"): the KV is offloaded to host memory
    // and the request waits in the prealloc queue's retracted_queue to be loaded back.
    r.stage = RequestStage::Retracted;
    w.retracted.push_back(r.id);
  } else {
    // A plain instance (_extend_requests_to_queue): back to the waiting queue, to be prefilled
    // again, prompt and output so far, over whatever prefix the cache still holds. Like a new
    // request, it counts as in the scheduler again once its prefill is queued.
    if (auto it = w.in_scheduler.find(r.session); it != w.in_scheduler.end() && --it->second <= 0)
      w.in_scheduler.erase(it);
    w.pool.lock(r.session);
    r.locked = true;
    r.cached = w.pool.cachedTokensFor(r.session, r.hashes, r.input);
    r.reserved = r.prefill_remaining = std::max<std::int64_t>(1, r.input - r.cached + r.generated - 1);
    r.stage = RequestStage::Prealloc;
    w.space_waiters.push_back(r.id);
  }
  return freed;
}

void DecodeScheduler::resumeRetracted(DecodeWorker& w) {
  // resume_retracted_reqs (disaggregation/decode.py): in order, each needs room for its whole KV
  // (prompt + output so far) plus kReservedDecodeTokens, beside that reserve for every active request.
  const std::int64_t cap = w.pool.capacity();
  while (!w.retracted.empty()) {
    SimRequest& r = ctx_.requests.at(w.retracted.front());
    const std::int64_t kv = r.input + r.generated - 1;
    const std::int64_t spare = NewTokenRatio::kReservedDecodeTokens;
    if (kv + spare > w.pool.availableTokens() - spare * activeRequests(w)) break;
    if (!w.pool.fits(kv, cap)) w.pool.makeRoom(kv, cap);
    if (!w.pool.fits(kv, cap)) break;
    w.retracted.pop_front();
    w.pool.reserve(kv);  // a fresh allocation (_pre_alloc without a prefix), loaded from host memory
    r.reserved = kv;
    r.prealloc_done = true;
    r.stage = RequestStage::Running;
    w.running.push_back(RunningSlot{r.id, static_cast<std::int32_t>(r.output) - r.generated, r.generated});
    w.context_tokens += r.input + r.generated;
  }
}

std::int64_t DecodeScheduler::outputReservation(const DecodeWorker& w) const {
  double tokens = 0;
  for (const auto* slots : {&w.running, &w.joining})
    for (const RunningSlot& s : *slots)
      if (s.id != 0) tokens += w.new_token_ratio.reserveFor(s.remaining);
  for (RequestId id : w.prefill_queue)
    if (auto it = ctx_.requests.find(id); it != ctx_.requests.end())
      tokens += w.new_token_ratio.reserveFor(it->second.output - it->second.generated);
  return static_cast<std::int64_t>(std::ceil(tokens));
}

std::int64_t DecodeScheduler::activeRequests(const DecodeWorker& w) const {
  return static_cast<std::int64_t>(w.running.size() + w.joining.size() + w.prefill_queue.size()) + w.pending_seeds;
}

bool DecodeScheduler::roomFor(DecodeWorker& w, const SimRequest& r, std::int64_t need, std::int64_t limit, bool evict) {
  const bool radix = w.pool.granularity() == EvictionGranularity::Block;
  std::int64_t want = need;
  if (ctx_.scenario.disaggregated && r.path != RoutePath::Direct) {
    // A transfer into a PD decode worker (pop_preallocated): none while retracted requests wait,
    // and kReservedDecodeTokens spare for it and for every request already active here.
    if (!w.retracted.empty()) return false;
    const std::int64_t active = activeRequests(w) - (r.seed_slot ? 1 : 0);
    want += NewTokenRatio::kReservedDecodeTokens * (active + 1);
  } else {
    // A prefill on this worker (PrefillAdder): its own clipped output in full, and the running
    // requests' remaining output scaled by new_token_ratio.
    want += std::min<std::int64_t>(r.output - r.generated, NewTokenRatio::kClipMaxNewTokens) + outputReservation(w);
  }
  // A radix cache counts its evictable entries as room and evicts only what the allocation takes;
  // a session-level pool trims idle sessions for the whole of it when asked to (`evict`).
  if (radix || !evict) {
    if (radix && !w.pool.fits(need, limit)) w.pool.makeRoom(need, limit);
  } else if (!w.pool.fits(want, limit)) {
    w.pool.makeRoom(want, limit);
  }
  const std::int64_t room = limit - w.pool.used() + (radix ? w.pool.evictableTokens() : 0);
  return w.pool.fits(need, limit) && want <= room;
}

void DecodeScheduler::release(DecodeWorker& w, SimRequest& r, bool commit_chain) {
  if (r.prealloc_done) w.pool.unreserve(r.reserved);
  r.reserved = 0;
  r.prealloc_done = false;
  // cache_finished_req keeps the KV the request holds and allocates nothing; the twin's chain may
  // want a token or a re-added shared block more, which it gets only if there is room.
  if (commit_chain) w.pool.commitWithin(r.session, r.hashes, r.input + r.output);
  if (r.locked) {
    w.pool.unlock(r.session);
    r.locked = false;
  }
  if (r.stage == RequestStage::Prefilling || r.stage == RequestStage::Running || r.stage == RequestStage::Finishing ||
      r.stage == RequestStage::Retracted) {
    auto it = w.in_scheduler.find(r.session);
    if (it != w.in_scheduler.end() && --it->second <= 0) w.in_scheduler.erase(it);
  }
}

void DecodeScheduler::onCommit(RequestId id) {
  SimRequest* r = ctx_.find(id);
  if (!r || r->stage != RequestStage::Finishing) return;
  DecodeWorker& w = ctx_.worker(r->worker);
  const WorkerId wid = r->worker;
  if (w.alive) release(w, *r, r->path != RoutePath::Transient);
  ctx_.requests.erase(id);
  admitWaiters(wid);
}

void DecodeScheduler::remove(SimRequest& r) {
  if (r.worker == kNoWorker) return;
  DecodeWorker& w = ctx_.worker(r.worker);
  switch (r.stage) {
    case RequestStage::Prefilling:
      if (auto it = std::find(w.prefill_queue.begin(), w.prefill_queue.end(), r.id); it != w.prefill_queue.end()) {
        w.prefill_queue.erase(it);
        w.pending_prefill_tokens -= r.prefill_remaining;
      }
      break;
    case RequestStage::Running: {
      for (auto* slots : {&w.running, &w.joining}) {
        auto it = std::find_if(slots->begin(), slots->end(), [&](const RunningSlot& s) { return s.id == r.id; });
        if (it == slots->end()) continue;
        r.reserved += it->kv;
        w.context_tokens -= r.input + it->generated;
        it->id = 0;
      }
      if (!w.iterating) std::erase_if(w.running, [](const RunningSlot& s) { return s.id == 0; });
      std::erase_if(w.joining, [](const RunningSlot& s) { return s.id == 0; });
      break;
    }
    case RequestStage::Retracted:
      if (auto it = std::find(w.retracted.begin(), w.retracted.end(), r.id); it != w.retracted.end())
        w.retracted.erase(it);
      break;
    case RequestStage::Prealloc:
      if (auto it = std::find(w.space_waiters.begin(), w.space_waiters.end(), r.id); it != w.space_waiters.end())
        w.space_waiters.erase(it);
      break;
    case RequestStage::WaitingSeedSlot:
      if (auto it = std::find(w.seed_slot_waiters.begin(), w.seed_slot_waiters.end(), r.id);
          it != w.seed_slot_waiters.end())
        w.seed_slot_waiters.erase(it);
      break;
    default:
      break;
  }
  if (w.alive) release(w, r, false);
}

void DecodeScheduler::admitWaiters(WorkerId id) {
  DecodeWorker& w = ctx_.worker(id);
  // Retracted requests come back first, and only at the start of an iteration.
  if (w.alive && !w.retracted.empty() && !w.iterating) startIteration(w);
  while (w.alive && !w.space_waiters.empty()) {
    SimRequest& r = ctx_.requests.at(w.space_waiters.front());
    // The prealloc queue only needs real room (capacity), and trims idle sessions to make it.
    if (!roomFor(w, r, r.reserved, w.pool.capacity(), /*evict=*/true)) break;
    w.space_waiters.pop_front();
    w.pool.reserve(r.reserved);
    r.prealloc_done = true;
    on_space(r);
  }
}

void DecodeScheduler::reset(WorkerId id) {
  DecodeWorker& w = ctx_.worker(id);
  w.prefill_queue.clear();
  w.running.clear();
  w.joining.clear();
  w.space_waiters.clear();
  w.seed_slot_waiters.clear();
  w.retracted.clear();
  w.in_scheduler.clear();
  w.plan_prefill.clear();
  w.plan_decode = 0;
  w.context_tokens = 0;
  w.pending_prefill_tokens = 0;
  w.pending_seeds = 0;
  w.iterating = false;
  ++w.epoch;
}

}  // namespace kvscope
