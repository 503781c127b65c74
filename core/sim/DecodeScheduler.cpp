#include "sim/DecodeScheduler.h"

#include <algorithm>

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
  const auto& prof = ctx_.profile;
  std::int64_t budget = prof.chunked_prefill_tokens;
  std::int64_t prefill_tokens = 0;
  std::size_t batch = w.running.size();
  for (RequestId id : w.prefill_queue) {
    if (budget <= 0 || batch >= static_cast<std::size_t>(prof.max_running_requests)) break;
    const SimRequest* r = ctx_.find(id);
    if (!r) continue;
    const std::int64_t take = std::min(budget, r->prefill_remaining);
    w.plan_prefill.emplace_back(id, take);
    budget -= take;
    prefill_tokens += take;
    ++batch;
  }
  w.plan_decode = w.running.size();
  if (w.plan_decode == 0 && w.plan_prefill.empty()) {
    w.iterating = false;
    return;
  }
  const double seconds = prof.decode_iteration_base_s +
                         prof.decode_iteration_per_request_s * static_cast<double>(w.plan_decode) +
                         prof.decode_iteration_per_context_token_s * static_cast<double>(w.context_tokens) +
                         static_cast<double>(prefill_tokens) / prof.prefill_tokens_per_s;
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
  w.context_tokens += grown;
  // Decode growth takes one KV slot per running request; a full pool evicts (radix leaves, or whole
  // idle sessions when `available_size() <= 0`, as maybe_trim_decode_session_cache does).
  if (!w.pool.fits(grown, w.pool.capacity())) w.pool.makeRoom(grown, w.pool.capacity());
  w.pool.reserve(grown);

  for (const auto& [rid, take] : w.plan_prefill) {
    SimRequest* r = ctx_.find(rid);
    if (!r || r->stage != RequestStage::Prefilling || r->worker != id) continue;
    r->prefill_remaining -= take;
    w.pending_prefill_tokens -= take;
    if (r->prefill_remaining > 0) continue;
    w.prefill_queue.erase(std::find(w.prefill_queue.begin(), w.prefill_queue.end(), rid));
    r->first_token = ctx_.now;
    r->stage = RequestStage::Running;
    ctx_.router.prefillDone(rid);
    if (r->output <= 1) {
      ctx_.completed(*r);
    } else {
      w.joining.push_back(RunningSlot{rid, static_cast<std::int32_t>(r->output - 1), 1});
      w.context_tokens += r->input + 1;
    }
  }
  for (RequestId rid : finished) {
    auto slot = std::find_if(w.running.begin(), w.running.end(), [&](const RunningSlot& s) { return s.id == rid; });
    SimRequest& r = ctx_.requests.at(rid);
    r.reserved += slot->generated - 1;
    w.context_tokens -= r.input + slot->generated;
    slot->id = 0;
    ctx_.completed(r);
  }
  std::erase_if(w.running, [](const RunningSlot& s) { return s.id == 0; });
  startIteration(w);
}

void DecodeScheduler::release(DecodeWorker& w, SimRequest& r, bool commit_chain) {
  if (r.prealloc_done) w.pool.unreserve(r.reserved);
  r.reserved = 0;
  r.prealloc_done = false;
  if (commit_chain) w.pool.commit(r.session, r.hashes, r.input + r.output);
  if (r.locked) {
    w.pool.unlock(r.session);
    r.locked = false;
  }
  if (r.stage == RequestStage::Prefilling || r.stage == RequestStage::Running || r.stage == RequestStage::Finishing) {
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
        r.reserved += it->generated - 1;
        w.context_tokens -= r.input + it->generated;
        it->id = 0;
      }
      if (!w.iterating) std::erase_if(w.running, [](const RunningSlot& s) { return s.id == 0; });
      std::erase_if(w.joining, [](const RunningSlot& s) { return s.id == 0; });
      break;
    }
    case RequestStage::Prealloc:
      if (auto it = std::find(w.space_waiters.begin(), w.space_waiters.end(), r.id); it != w.space_waiters.end())
        w.space_waiters.erase(it);
      break;
    case RequestStage::WaitingSeedSlot:
      if (auto it = std::find(w.seed_slot_waiters.begin(), w.seed_slot_waiters.end(), r.id);
          it != w.seed_slot_waiters.end())
        w.seed_slot_waiters.erase(it);
      break;
    default: break;
  }
  if (w.alive) release(w, r, false);
}

void DecodeScheduler::admitWaiters(WorkerId id) {
  DecodeWorker& w = ctx_.worker(id);
  while (w.alive && !w.space_waiters.empty()) {
    SimRequest& r = ctx_.requests.at(w.space_waiters.front());
    // The prealloc queue only needs real room (capacity), and trims idle sessions to make it.
    if (!w.pool.fits(r.reserved, w.pool.capacity())) w.pool.makeRoom(r.reserved, w.pool.capacity());
    if (!w.pool.fits(r.reserved, w.pool.capacity())) break;
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
