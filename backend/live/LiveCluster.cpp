#include "backend/live/LiveCluster.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

LiveCluster::LiveCluster(RunStarted run, std::vector<EventSink*> sinks)
    : LiveCluster(std::move(run), std::move(sinks), {}) {}

LiveCluster::LiveCluster(RunStarted run, std::vector<EventSink*> sinks, Clock clock)
    : run_(std::move(run)), sinks_(std::move(sinks)), t0_(std::chrono::steady_clock::now()), clock_(std::move(clock)) {
  gauges_.resize(run_.workers.size());
  crashed_at_.assign(run_.workers.size(), -1);
  last_batch_at_.assign(run_.workers.size(), -1);
  for (std::size_t i = 0; i < run_.workers.size(); ++i) {
    gauges_[i].worker = static_cast<WorkerId>(i);
    gauges_[i].kv_capacity = run_.workers[i].kv_capacity_tokens;
  }
  for (const auto& name : workerNames()) status_.push_back({name, WorkerHealth::Unknown, {}, 0, 0});
}

std::vector<std::string> LiveCluster::workerNames() const {
  std::vector<std::string> names;
  for (const auto& w : run_.workers) names.push_back(w.name);
  for (const auto& p : run_.prefill) names.push_back(p.name);
  return names;
}

SimTime LiveCluster::now() const {
  if (clock_) return clock_();
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0_).count();
}

std::uint64_t LiveCluster::emitLocked(EventPayload payload) {
  // Sinks expect time to never go back; the steady clock guarantees it, max() keeps it so (a log
  // clock can step back when the host's clock did).
  last_time_ = std::max(last_time_, now());
  Event e{++seq_, last_time_, std::move(payload)};
  // A worker that crashed is down until its /metrics answers again.
  if (const auto* c = std::get_if<WorkerCrashed>(&e.payload);
      c && c->worker >= 0 && static_cast<std::size_t>(c->worker) < gauges_.size()) {
    gauges_[static_cast<std::size_t>(c->worker)].alive = false;
    crashed_at_[static_cast<std::size_t>(c->worker)] = e.time;
  }
  for (EventSink* s : sinks_) s->onEvent(e);
  return e.seq;
}

void LiveCluster::start() {
  std::lock_guard lock(mutex_);
  if (started_) return;
  started_ = true;
  t0_ = std::chrono::steady_clock::now();
  emitLocked(run_);
}

void LiveCluster::finish(bool completed, std::vector<std::string> notes) {
  std::lock_guard lock(mutex_);
  if (!started_ || finished_) return;
  emitLocked(Snapshot{gauges_, {}});
  if (notes.size() > RunFinished::kMaxNotes) notes.resize(RunFinished::kMaxNotes);
  emitLocked(RunFinished{completed, std::move(notes)});
  finished_ = true;
}

std::uint64_t LiveCluster::post(EventPayload payload) {
  std::lock_guard lock(mutex_);
  if (!started_ || finished_) return 0;
  return emitLocked(std::move(payload));
}

void LiveCluster::post(std::vector<EventPayload> payloads) {
  std::lock_guard lock(mutex_);
  if (!started_ || finished_) return;
  for (auto& p : payloads) emitLocked(std::move(p));
}

void LiveCluster::setGauges(const WorkerGauges& g, SimTime asked_at) {
  std::lock_guard lock(mutex_);
  if (g.worker < 0 || static_cast<std::size_t>(g.worker) >= gauges_.size()) return;
  WorkerGauges& slot = gauges_[static_cast<std::size_t>(g.worker)];
  SimTime& crashed_at = crashed_at_[static_cast<std::size_t>(g.worker)];
  if (crashed_at >= 0 && asked_at <= crashed_at) return;  // an answer from before the crash
  const bool was_down = crashed_at >= 0;
  crashed_at = -1;
  last_batch_at_[static_cast<std::size_t>(g.worker)] = -1;  // /metrics speaks for the worker now
  const std::int32_t bindings = slot.bindings, resident = slot.resident_sessions;
  const std::int64_t expired = slot.expired_unreported, awaiting = slot.awaiting_report,
                     event_blocks = slot.kv_event_blocks;
  const std::int64_t event_stored = slot.kv_event_stored, event_removed = slot.kv_event_removed;
  slot = g;
  slot.kv_peak = std::max(g.kv_peak, g.kv_used);
  // What /metrics does not know (router bindings, resident sessions) stays as the router said.
  slot.bindings = bindings;
  slot.resident_sessions = resident;
  slot.expired_unreported = expired;
  slot.awaiting_report = awaiting;
  slot.kv_event_blocks = event_blocks;
  slot.kv_event_stored = event_stored;
  slot.kv_event_removed = event_removed;
  slot.alive = true;
  if (was_down && started_ && !finished_) emitLocked(WorkerRestarted{g.worker});
}

void LiveCluster::setUnreported(WorkerId worker, std::int64_t expired, std::int64_t awaiting) {
  std::lock_guard lock(mutex_);
  if (worker < 0 || static_cast<std::size_t>(worker) >= gauges_.size()) return;
  gauges_[static_cast<std::size_t>(worker)].expired_unreported = expired;
  gauges_[static_cast<std::size_t>(worker)].awaiting_report = awaiting;
}

void LiveCluster::setKvEventBlocks(WorkerId worker, std::int64_t blocks, std::int64_t tokens, std::int64_t stored,
                                   std::int64_t removed, bool set_kv_used) {
  std::lock_guard lock(mutex_);
  if (worker < 0 || static_cast<std::size_t>(worker) >= gauges_.size()) return;
  WorkerGauges& g = gauges_[static_cast<std::size_t>(worker)];
  g.kv_event_blocks = blocks;
  g.kv_event_stored = stored;
  g.kv_event_removed = removed;
  if (!set_kv_used) return;
  g.kv_used = tokens;
  g.kv_peak = std::max(g.kv_peak, tokens);
}

void LiveCluster::setBatchGauges(WorkerId worker, const BatchGauges& b) {
  std::lock_guard lock(mutex_);
  if (worker < 0 || static_cast<std::size_t>(worker) >= gauges_.size()) return;
  WorkerGauges& g = gauges_[static_cast<std::size_t>(worker)];
  // A batch line after the crash in the worker's own log: it runs again (the line comes from the
  // restarted scheduler; the log is in order, so it cannot predate the crash).
  if (SimTime& crashed_at = crashed_at_[static_cast<std::size_t>(worker)]; crashed_at >= 0) {
    crashed_at = -1;
    g.alive = true;
    if (started_ && !finished_) emitLocked(WorkerRestarted{worker});
  }
  last_batch_at_[static_cast<std::size_t>(worker)] = now();
  // vLLM says its pool at start-up (GPU KV cache size); /metrics' cache config says it again later.
  if (b.capacity_tokens > 0) g.kv_capacity = std::min<std::int64_t>(b.capacity_tokens, 1'000'000'000'000'000);
  const auto count = [](std::int64_t v) { return static_cast<std::int32_t>(std::min<std::int64_t>(v, 1'000'000'000)); };
  if (b.running_req >= 0) g.running = count(b.running_req);
  if (b.queue_req >= 0) g.queued = count(b.queue_req);
  if (b.tokens >= 0) {
    g.kv_used = std::min<std::int64_t>(b.tokens, 1'000'000'000'000'000);
    // The line gives a ratio too: the capacity follows when /metrics has not told it.
    if (g.kv_capacity <= 0 && b.token_usage > 0 && std::isfinite(b.token_usage))
      g.kv_capacity =
          static_cast<std::int64_t>(std::min(1e15, std::round(static_cast<double>(b.tokens) / b.token_usage)));
  } else if (b.token_usage >= 0 && g.kv_capacity > 0) {
    g.kv_used =
        static_cast<std::int64_t>(std::min(1e15, std::round(b.token_usage * static_cast<double>(g.kv_capacity))));
  }
  g.kv_peak = std::max(g.kv_peak, g.kv_used);
  if (b.prealloc_req >= 0 || b.transfer_req >= 0)
    g.pending_seeds = count(std::max<std::int64_t>(b.prealloc_req, 0) + std::max<std::int64_t>(b.transfer_req, 0));
}

void LiveCluster::setHealth(std::size_t index, WorkerHealth health, std::string reason) {
  std::lock_guard lock(mutex_);
  if (index >= status_.size()) return;
  LiveWorkerStatus& s = status_[index];
  ++s.scrapes;
  if (health == WorkerHealth::Unreachable) ++s.failed_scrapes;
  // Into the stream only when it changes: a worker down for an hour is one event, not one a scrape.
  const bool changed = health != s.health || reason != s.reason;
  s.health = health;
  s.reason = std::move(reason);
  if (changed && started_ && !finished_) emitLocked(WorkerHealthChanged{s.name, s.health, s.reason});
}

void LiveCluster::snapshot() {
  std::lock_guard lock(mutex_);
  if (!started_ || finished_) return;
  const SimTime t = now();
  for (std::size_t i = 0; i < gauges_.size(); ++i)
    if (last_batch_at_[i] >= 0 && t - last_batch_at_[i] > secondsToTime(kBatchQuietS)) {
      gauges_[i].running = 0;  // its KV stays: the cache is still resident
      gauges_[i].queued = 0;
      last_batch_at_[i] = -1;
    }
  emitLocked(Snapshot{gauges_, {}});
  for (auto& g : gauges_) g.kv_peak = g.kv_used;  // the peak is per snapshot interval
  // Live, a recording is on its way to disk every tick. An import (its own clock: the logs') has no
  // one to lose it to and would only split its writes into one per second of log time.
  if (!clock_)
    for (EventSink* sink : sinks_) sink->flush();
}

void LiveCluster::flush() {
  std::lock_guard lock(mutex_);
  for (EventSink* sink : sinks_) sink->flush();
}

std::vector<LiveWorkerStatus> LiveCluster::statuses() const {
  std::lock_guard lock(mutex_);
  return status_;
}

std::uint64_t LiveCluster::events() const {
  std::lock_guard lock(mutex_);
  return seq_;
}

}  // namespace kvscope
