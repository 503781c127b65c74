#include "core/sim/SeedPipeline.h"
#include "core/model/NumberText.h"
#include "core/trace/BlockChain.h"

#include <algorithm>
#include <cstdio>

namespace kvscope {

std::int32_t SeedPipeline::pickPrefill() const {
  std::int32_t best = 0;
  for (std::size_t p = 1; p < ctx_.prefill.size(); ++p)
    if (ctx_.prefill[p]->busy_until < ctx_.prefill[static_cast<std::size_t>(best)]->busy_until)
      best = static_cast<std::int32_t>(p);
  return best;
}

void SeedPipeline::start(SimRequest& r) {
  DecodeWorker& w = ctx_.worker(r.worker);
  if (vllm()) {
    // The lab's proxy sends every turn of a session to one producer (a hash of the session id, as
    // its Mooncake proxy's MB5_P_ROUTING=session does), so P's prefix cache holds the session.
    r.prefill = static_cast<std::int32_t>(mixHash(0x70726f64756365ULL, r.session) % ctx_.prefill.size());
    dispatch(r);
    return;
  }
  r.prefill = pickPrefill();
  if (link(r.prefill, r.worker).state == LinkState::Dead) {
    ctx_.fail(r.id, "KVTransferError: Decode instance could be dead, remote mooncake session " +
                        ctx_.workerName(r.worker) + " is not alive (dropping)");
    return;
  }
  const long budget = ctx_.knobs.getInt(KnobId::PendingSeedBudget);
  if (budget > 0 && w.pending_seeds >= budget) {
    r.stage = RequestStage::WaitingSeedSlot;
    w.seed_slot_waiters.push_back(r.id);
    return;
  }
  dispatch(r);
}

void SeedPipeline::dispatch(SimRequest& r) {
  DecodeWorker& w = ctx_.worker(r.worker);
  ++w.pending_seeds;
  r.seed_slot = true;
  ++r.attempt;
  if (!r.locked) {
    w.pool.lock(r.session);
    r.locked = true;
  }
  // D's prealloc: what it holds of the prompt now (a seed may have waited for its slot), and room
  // for the rest under the pool's real capacity, trimming idle sessions when it must.
  r.cached = std::min(r.input, w.pool.matchPrefixTokens(r.hashes));
  r.reserved = std::max<std::int64_t>(1, r.input - r.cached);
  ctx_.publish(SeedStarted{r.id, r.session, r.prefill, r.worker, r.reserved, r.path == RoutePath::Reseed});
  r.stage = RequestStage::Prealloc;
  if (vllm()) {
    // D hears of the turn only when P has prefilled it (queueOnDecode).
  } else if (decode_.roomFor(w, r, r.reserved, w.pool.capacity(), /*evict=*/true)) {
    w.pool.reserve(r.reserved);
    r.prealloc_done = true;
    r.stage = RequestStage::Seeding;
  } else {
    w.space_waiters.push_back(r.id);
    const double window = ctx_.knobs.get(KnobId::McHandshakeTimeoutS);
    ctx_.agenda.push(ctx_.now + secondsToTime(window), SimEventType::HandshakeCheck, r.id, 0, r.attempt);
    ctx_.agenda.push(ctx_.now + secondsToTime(window / 2), SimEventType::SuspectCheck, r.id, 0, r.attempt);
  }
  PrefillWorker& p = *ctx_.prefill[static_cast<std::size_t>(r.prefill)];
  const std::int64_t compute = std::max<std::int64_t>(1, r.input - p.pool.matchPrefixTokens(r.hashes));
  r.prefix_hit = std::max<std::int64_t>(0, r.input - compute);  // the prefill worker's cache hit
  const SimTime begin = std::max(ctx_.now, p.busy_until);
  const double cached = static_cast<double>(std::max<std::int64_t>(0, r.input - compute));
  p.busy_until = begin + secondsToTime(ctx_.profile.prefill_overhead_s +
                                       static_cast<double>(compute) / ctx_.profile.prefill_tokens_per_s +
                                       ctx_.profile.prefill_per_context_token_s * static_cast<double>(compute) *
                                           (cached + static_cast<double>(compute) / 2));
  ctx_.agenda.push(p.busy_until, SimEventType::PrefillDone, r.id, 0, r.attempt);
}

void SeedPipeline::onPrefillDone(SimRequest& r) {
  KvPool& cache = ctx_.prefill[static_cast<std::size_t>(r.prefill)]->pool;
  cache.commitWithin(r.session, r.hashes, r.input);
  r.prefill_done = true;
  ctx_.router.prefillDone(r.id);
  if (vllm())
    queueOnDecode(r);
  else if (r.prealloc_done)
    enqueueTransfer(r);
}

void SeedPipeline::queueOnDecode(SimRequest& r) {
  DecodeWorker& w = ctx_.worker(r.worker);
  // What D's own prefix cache holds now decides what it pulls; it waits, in order, until that fits
  // (vLLM's scheduler keeps it in `waiting`: the lab's "Running=0, Waiting=6, KV cache=97.1%").
  r.cached = std::min(r.input, w.pool.matchPrefixTokens(r.hashes));
  r.reserved = std::max<std::int64_t>(1, r.input - r.cached);
  if (w.space_waiters.empty() && decode_.roomFor(w, r, r.reserved, w.pool.capacity(), /*evict=*/true)) {
    w.pool.reserve(r.reserved);
    r.prealloc_done = true;
    r.stage = RequestStage::Seeding;
    enqueueTransfer(r);
    return;
  }
  w.space_waiters.push_back(r.id);
}

void SeedPipeline::onPreallocDone(SimRequest& r) {
  r.stage = RequestStage::Seeding;
  if (r.prefill_done) enqueueTransfer(r);
}

void SeedPipeline::enqueueTransfer(SimRequest& r) {
  MooncakeLink& l = link(r.prefill, r.worker);
  if (!vllm() && l.state == LinkState::Dead) {
    ctx_.fail(r.id, "KVTransferError: Decode instance could be dead, remote mooncake session " +
                        ctx_.workerName(r.worker) + " is not alive");
    return;
  }
  r.transfer_bytes = static_cast<std::int64_t>(static_cast<double>(r.reserved) * ctx_.profile.kv_bytes_per_token);
  ++l.queue_depth;
  l.bytes_in_flight += r.transfer_bytes;
  r.on_link = true;
  r.transfer_enqueued = ctx_.now;
  l.waiting.push_back(r.id);
  // The handshake for this transfer must go through within the window even while it waits.
  if (!vllm())
    ctx_.agenda.push(ctx_.now + secondsToTime(ctx_.knobs.get(KnobId::McHandshakeTimeoutS)), SimEventType::EgressCheck,
                     r.id, 0, r.attempt);
  startNextTransfer(r.prefill, r.worker);
}

void SeedPipeline::startFreeTransfers(std::int32_t p, WorkerId w) {
  p_nic_busy_.resize(ctx_.prefill.size(), 0);
  d_nic_busy_.resize(ctx_.workers.size(), 0);
  for (;;) {
    // The oldest head of a queue on a link that touches P p or D w, with both its ends free.
    SimRequest* next = nullptr;
    auto consider = [&](std::int32_t lp, WorkerId lw) {
      MooncakeLink& l = link(lp, lw);
      while (!l.waiting.empty()) {
        SimRequest* r = ctx_.find(l.waiting.front());
        if (r && r->on_link) break;
        l.waiting.pop_front();
      }
      if (l.active != 0 || l.waiting.empty() || p_nic_busy_[static_cast<std::size_t>(lp)] ||
          d_nic_busy_[static_cast<std::size_t>(lw)])
        return;
      SimRequest* r = ctx_.find(l.waiting.front());
      if (!next || r->transfer_enqueued < next->transfer_enqueued ||
          (r->transfer_enqueued == next->transfer_enqueued && r->id < next->id))
        next = r;
    };
    for (std::size_t d = 0; d < ctx_.workers.size(); ++d) consider(p, static_cast<WorkerId>(d));
    for (std::size_t q = 0; q < ctx_.prefill.size(); ++q) consider(static_cast<std::int32_t>(q), w);
    if (!next) return;
    MooncakeLink& l = link(next->prefill, next->worker);
    l.waiting.pop_front();
    l.active = next->id;
    p_nic_busy_[static_cast<std::size_t>(next->prefill)] = 1;
    d_nic_busy_[static_cast<std::size_t>(next->worker)] = 1;
    next->transfer_started = true;
    ctx_.publish(TransferStarted{next->id, next->prefill, next->worker, next->reserved, next->transfer_bytes,
                                 ctx_.now - next->transfer_enqueued});
    const double seconds = static_cast<double>(next->transfer_bytes) / ctx_.profile.link_bandwidth_bytes_per_s;
    ctx_.agenda.push(ctx_.now + std::max<SimTime>(1, secondsToTime(seconds)), SimEventType::TransferDone, next->id, 0,
                     next->attempt);
    // Another may still start on the other freed end (a P's send with this D busy, or the reverse).
  }
}

void SeedPipeline::startNextTransfer(std::int32_t p, WorkerId w) {
  if (vllm()) {
    startFreeTransfers(p, w);
    return;
  }
  MooncakeLink& l = link(p, w);
  while (l.active == 0 && l.state != LinkState::Dead && !l.waiting.empty()) {
    SimRequest* r = ctx_.find(l.waiting.front());
    l.waiting.pop_front();
    if (!r || !r->on_link) continue;
    l.active = r->id;
    r->transfer_started = true;
    ctx_.publish(TransferStarted{r->id, p, w, r->reserved, r->transfer_bytes, ctx_.now - r->transfer_enqueued});
    const double seconds = static_cast<double>(r->transfer_bytes) / ctx_.profile.link_bandwidth_bytes_per_s;
    ctx_.agenda.push(ctx_.now + std::max<SimTime>(1, secondsToTime(seconds)), SimEventType::TransferDone, r->id, 0,
                     r->attempt);
  }
}

void SeedPipeline::onHandshakeCheck(SimRequest& r) {
  if (r.prealloc_done) return;
  markDead(r.prefill, r.worker,
           "handshake timeout: " + ctx_.workerName(r.worker) + " did not preallocate " + std::to_string(r.reserved) +
               " tokens within " + secondsText(ctx_.knobs.get(KnobId::McHandshakeTimeoutS)));
}

void SeedPipeline::onSuspectCheck(SimRequest& r) {
  MooncakeLink& l = link(r.prefill, r.worker);
  if (r.prealloc_done || l.state != LinkState::Alive) return;
  l.state = LinkState::Suspect;
  ctx_.publish(LinkHealth{r.prefill, r.worker, LinkState::Suspect, "handshake pending for half the window", 0});
}

void SeedPipeline::onEgressCheck(SimRequest& r) {
  if (r.transfer_started || !r.on_link) return;
  markDead(r.prefill, r.worker,
           "handshake timeout: transfer queued in P's egress queue for over " +
               secondsText(ctx_.knobs.get(KnobId::McHandshakeTimeoutS)));
}

void SeedPipeline::onTransferDone(SimRequest& r) {
  MooncakeLink& l = link(r.prefill, r.worker);
  const SimTime limit = secondsToTime(ctx_.knobs.get(KnobId::McTransferTimeoutS));
  if (ctx_.now - r.transfer_enqueued > limit) {
    ctx_.publish(TransferFinished{r.id, r.prefill, r.worker, r.reserved, r.transfer_bytes, false, "transfer timeout"});
    ctx_.fail(r.id, "KVTransferError: transfer timed out after " +
                        secondsText(timeToSeconds(ctx_.now - r.transfer_enqueued)));
    return;
  }
  const double crash_at = ctx_.scenario.consumer_crash_kv_fraction;
  if (vllm() && crash_at > 0 &&
      static_cast<double>(ctx_.worker(r.worker).pool.used()) >=
          crash_at * static_cast<double>(ctx_.worker(r.worker).pool.capacity())) {
    ctx_.publish(TransferFinished{r.id, r.prefill, r.worker, r.reserved, r.transfer_bytes, false,
                                  "Mooncake transfer engine returned -1"});
    const WorkerId dead = r.worker;
    ctx_.fail(r.id, "KV load failed (kv_load_failure_policy=fail): Mooncake transfer engine returned -1");
    crash(dead,
          "EngineCore died: ValueError: Counters can only be incremented by non-negative amounts "
          "(prompt-token counter negative after a failed KV load at a full pool)",
          /*restart=*/false);
    return;
  }
  ctx_.publish(TransferFinished{r.id, r.prefill, r.worker, r.reserved, r.transfer_bytes, true, {}});
  ctx_.sessions[r.session_index].ever_seeded |= r.path != RoutePath::Transient;
  detach(r);
  if (l.state == LinkState::Suspect) {
    l.state = LinkState::Alive;
    ctx_.publish(LinkHealth{r.prefill, r.worker, LinkState::Alive, "transfer completed", 0});
  }
  r.first_token = ctx_.now;  // P made the first token; D streams it once the KV has landed
  decode_.joinBatch(r);
}

void SeedPipeline::markDead(std::int32_t p, WorkerId w, const std::string& reason) {
  MooncakeLink& l = link(p, w);
  if (l.state == LinkState::Dead) return;
  std::vector<RequestId> victims;
  for (const auto& [id, r] : ctx_.requests)
    if (r.worker == w && r.prefill == p && (r.stage == RequestStage::Prealloc || r.stage == RequestStage::Seeding))
      victims.push_back(id);
  std::sort(victims.begin(), victims.end());  // hash-map order is not deterministic across builds
  l.state = LinkState::Dead;                  // before failing anyone: nothing new starts on this link
  ctx_.publish(LinkHealth{p, w, LinkState::Dead, reason, static_cast<std::int32_t>(victims.size())});
  const std::string error =
      "KVTransferError: Decode instance could be dead, remote mooncake session " + ctx_.workerName(w) + " is not alive";
  for (RequestId id : victims) ctx_.fail(id, error);
  ctx_.agenda.push(ctx_.now + secondsToTime(ctx_.profile.link_probe_interval_s), SimEventType::LinkRecover, 0, p, w);
}

void SeedPipeline::onLinkRecover(std::int32_t p, WorkerId w) {
  MooncakeLink& l = link(p, w);
  if (l.state != LinkState::Dead || !ctx_.worker(w).alive) return;
  l.state = LinkState::Alive;
  ctx_.publish(LinkHealth{p, w, LinkState::Alive, "probe succeeded", 0});
}

void SeedPipeline::detach(SimRequest& r) {
  if (r.on_link) {
    MooncakeLink& l = link(r.prefill, r.worker);
    --l.queue_depth;
    l.bytes_in_flight -= r.transfer_bytes;
    r.on_link = false;
    if (l.active == r.id) {
      l.active = 0;
      if (vllm()) {
        p_nic_busy_[static_cast<std::size_t>(r.prefill)] = 0;
        d_nic_busy_[static_cast<std::size_t>(r.worker)] = 0;
      }
      startNextTransfer(r.prefill, r.worker);
    } else {
      std::erase(l.waiting, r.id);
    }
  }
  if (r.seed_slot) {
    r.seed_slot = false;
    releaseSlot(r.worker);
  }
}

void SeedPipeline::releaseSlot(WorkerId id) {
  DecodeWorker& w = ctx_.worker(id);
  --w.pending_seeds;
  const long budget = ctx_.knobs.getInt(KnobId::PendingSeedBudget);
  while (w.alive && !w.seed_slot_waiters.empty() && (budget == 0 || w.pending_seeds < budget)) {
    const RequestId next = w.seed_slot_waiters.front();
    w.seed_slot_waiters.pop_front();
    if (SimRequest* r = ctx_.find(next)) dispatch(*r);
  }
}

}  // namespace kvscope
