#include "core/metrics/SummaryCollector.h"
#include "core/model/Overloaded.h"
#include "core/model/Saturating.h"

#include <algorithm>

namespace kvscope {

SummaryCollector::PerWorker& SummaryCollector::worker(WorkerId w) {
  if (w >= static_cast<WorkerId>(workers_.size())) workers_.resize(static_cast<std::size_t>(w) + 1);
  return workers_[static_cast<std::size_t>(w)];
}

void SummaryCollector::onEvent(const Event& e) {
  // Pausing, pacing or seeking the playback changes nothing the run did (nor how long it ran).
  if (std::holds_alternative<RunControlChanged>(e.payload)) return;
  last_time_ = std::max(last_time_, e.time);
  lab_.onEvent(e);
  std::visit(
      Overloaded{
          [&](const RunStarted& r) {
            run_ = r;
            workers_.assign(r.workers.size(), PerWorker{});
            for (std::size_t i = 0; i < r.workers.size(); ++i) workers_[i].info = r.workers[i];
          },
          [&](const RunFinished& f) { source_notes_ = f.notes; },
          [&](const Admission& a) {
            if (a.result != AdmissionResult::Admitted || a.worker < 0) return;
            auto& w = worker(a.worker);
            ++w.bindings;
            w.sessions.add(a.session);
            if (a.path == RoutePath::Direct) ++direct_;
          },
          [&](const SeedStarted& s) { ++(s.reseed ? reseeds_ : seeds_); },
          [&](const Eviction& ev) {
            ++evictions_;
            addClamped(eviction_tokens_, ev.tokens_freed);
            eviction_max_ = std::max<long long>(eviction_max_, ev.tokens_freed);
            if (ev.session != 0) evicted_sessions_.add(ev.session);
            if (ev.worker >= 0) ++worker(ev.worker).evictions;
          },
          [&](const LinkHealth& l) {
            if (l.state != LinkState::Dead) return;
            ++link_dead_;
            addClamped(aborted_, l.aborted_requests);
          },
          [&](const WorkerCrashed& c) {
            ++crashes_;
            addClamped(aborted_, c.aborted_requests);
          },
          [&](const Correction&) { ++corrections_; },
          [&](const Retraction& r) {
            ++retraction_events_;
            addClamped(retractions_, static_cast<long>(r.requests.size()));
            if (r.worker >= 0) addClamped(worker(r.worker).retractions, static_cast<long>(r.requests.size()));
          },
          [&](const RequestDone& d) {
            ++total_;
            if (d.status != RequestStatus::Ok) {
              ++failed_;
              return;
            }
            e2e_.add(timeToSeconds(d.e2e));
            if (d.ttft >= 0) ttft_.add(timeToSeconds(d.ttft));
            if (d.worker >= 0) {
              addClamped(worker(d.worker).tokens_served, d.input_tokens);
              addClamped(worker(d.worker).tokens_served, d.output_tokens);
            }
          },
          [&](const PolicyChanged& p) { run_.policy = p.new_policy; },
          [&](const Snapshot& s) {
            for (const auto& g : s.workers) {
              if (g.worker < 0) continue;
              worker(g.worker).expired_unreported = std::max(worker(g.worker).expired_unreported, g.expired_unreported);
              if (g.kv_capacity <= 0) continue;
              auto& w = worker(g.worker);
              w.kv_peak_frac =
                  std::max(w.kv_peak_frac, static_cast<double>(g.kv_peak) / static_cast<double>(g.kv_capacity));
              w.capacity_violations = std::max(w.capacity_violations, static_cast<long long>(g.kv_capacity_violations));
            }
          },
          [](const auto&) {},
      },
      e.payload);
}

RunSummary SummaryCollector::summary() const {
  RunSummary s;
  s.scenario = run_.scenario;
  s.policy = run_.policy;
  s.seed = run_.seed;
  s.sim_seconds = timeToSeconds(last_time_);
  s.source_notes = source_notes_;
  s.total = total_;
  s.failed = failed_;
  s.completed = total_ - failed_;
  s.failure_rate = total_ > 0 ? static_cast<double>(failed_) / static_cast<double>(total_) : 0;
  s.e2e_s = e2e_.summary();
  s.ttft_s = ttft_.summary();
  long bindings = 0;
  for (const auto& w : workers_) bindings += w.bindings;
  long long max_served = 0, min_served = -1;
  for (const auto& w : workers_) {
    WorkerSummary ws;
    ws.id = w.info.name;
    ws.role = toString(w.info.role);
    ws.bindings = w.bindings;
    ws.share = bindings > 0 ? static_cast<double>(w.bindings) / static_cast<double>(bindings) : 0;
    ws.sessions = static_cast<long>(w.sessions.count());
    ws.kv_peak_frac = w.kv_peak_frac;
    ws.evictions = w.evictions;
    ws.tokens_served = w.tokens_served;
    ws.retractions = w.retractions;
    s.kv_capacity_violations += w.capacity_violations;
    s.expired_unreported += w.expired_unreported;
    s.workers.push_back(ws);
    max_served = std::max(max_served, w.tokens_served);
    min_served = min_served < 0 ? w.tokens_served : std::min(min_served, w.tokens_served);
  }
  if (min_served > 0) s.token_imbalance = static_cast<double>(max_served) / static_cast<double>(min_served);
  s.eviction_count = evictions_;
  s.eviction_mean_tokens = evictions_ > 0 ? static_cast<double>(eviction_tokens_) / static_cast<double>(evictions_) : 0;
  s.eviction_max_tokens = eviction_max_;
  s.eviction_sessions_hit = static_cast<long>(evicted_sessions_.count());
  s.seeds = seeds_;
  s.reseeds = reseeds_;
  s.direct_appends = direct_;
  s.link_dead_events = link_dead_;
  s.aborted_requests = aborted_;
  s.worker_crashes = crashes_;
  s.corrections = corrections_;
  s.retractions = retractions_;
  s.retraction_events = retraction_events_;
  s.lab = lab_.metrics();
  return s;
}

std::size_t SummaryCollector::memoryBytes() const {
  std::size_t n =
      sizeof(*this) + lab_.memoryBytes() + e2e_.memoryBytes() + ttft_.memoryBytes() + evicted_sessions_.memoryBytes();
  for (const auto& w : workers_) n += sizeof(w) + w.sessions.memoryBytes();
  return n;
}

}  // namespace kvscope
