#include "core/telemetry/TelemetryStore.h"

#include <algorithm>

#include "core/model/Overloaded.h"

namespace kvscope {

TelemetryStore::TelemetryStore(Limits limits)
    : limits_(limits),
      traces_(limits.requests),
      ttft_series_(series()),
      e2e_series_(series()),
      apc_series_(series()),
      apc_ceiling_series_(series()) {}

void TelemetryStore::clear() {
  const std::uint64_t revision = revision_, run_id = run_id_;
  *this = TelemetryStore(limits_);
  revision_ = revision + 1;
  run_id_ = run_id + 1;
}

bool TelemetryStore::isDiscrete(const EventPayload& p) {
  return std::visit(Overloaded{[](const Eviction&) { return true; }, [](const SeedStarted&) { return true; },
                               [](const Retraction&) { return true; }, [](const LinkHealth&) { return true; },
                               [](const WorkerCrashed&) { return true; }, [](const WorkerRestarted&) { return true; },
                               [](const Correction&) { return true; }, [](const KnobChanged&) { return true; },
                               [](const PolicyChanged&) { return true; },
                               [](const TransferFinished& t) { return !t.ok; }, [](const auto&) { return false; }},
                    p);
}

template <typename T, typename Ring>
void TelemetryStore::pushBounded(Ring& ring, T&& value, std::size_t limit) {
  ring.push_back(std::forward<T>(value));
  if (ring.size() > limit) ring.pop_front();
}

void TelemetryStore::ingest(const std::vector<Event>& batch) {
  for (const Event& e : batch) ingest(e);
}

void TelemetryStore::ingest(const Event& e) {
  // A second RunStarted restates the run (a replay's seek, a reconnect to a new run): start over.
  if (run_ && std::holds_alternative<RunStarted>(e.payload)) clear();
  ++events_;
  ++revision_;
  last_seq_ = std::max(last_seq_, e.seq);
  now_ = std::max(now_, e.time);
  summary_.onEvent(e);
  diagnosis_.onEvent(e);
  traces_.onEvent(e);
  if (isDiscrete(e.payload)) {
    if (discrete_.size() >= limits_.discrete_events) {
      discrete_.pop_front();
      ++dropped_discrete_;
    }
    discrete_.push_back(e);
  }
  std::visit(
      Overloaded{[&](const RunStarted& r) { onRunStarted(r); }, [&](const Snapshot& s) { onSnapshot(e.time, s); },
                 [&](const RouteDecision& d) { keepDecision(d); }, [&](const Admission& a) { onAdmission(e.time, a); },
                 [&](const Eviction& ev) {
                   if (WorkerSeries* w = worker(ev.worker)) {
                     ++w->evictions;
                     w->last_eviction = e.time;
                   }
                 },
                 [&](const WorkerCrashed& c) {
                   if (WorkerSeries* w = worker(c.worker)) {
                     w->alive = false;
                     w->crashed_at = e.time;
                     w->restarted_at = -1;
                     ++w->crashes;
                   }
                 },
                 [&](const WorkerRestarted& r) {
                   if (WorkerSeries* w = worker(r.worker)) {
                     w->alive = true;
                     w->restarted_at = e.time;
                   }
                 },
                 [&](const LinkHealth& l) {
                   LinkSeries& link = linkSeries(l.prefill, l.worker);
                   link.latest.state = l.state;
                   if (l.state != LinkState::Alive && !l.reason.empty()) {
                     link.last_failure = l.reason;
                     link.last_failure_time = e.time;
                   }
                 },
                 [&](const TransferFinished& t) {
                   if (t.ok) return;
                   LinkSeries& link = linkSeries(t.prefill, t.worker);
                   ++link.failures;
                   link.last_failure = t.reason;
                   link.last_failure_time = e.time;
                 },
                 [&](const RequestDone& d) { onRequestDone(e.time, d); },
                 [&](const KnobChanged& k) {
                   knobs_[k.name] = k.new_value;
                   pushBounded(control_changes_, e, limits_.control_changes);
                 },
                 [&](const PolicyChanged& p) {
                   policy_ = p.new_policy;
                   pushBounded(control_changes_, e, limits_.control_changes);
                 },
                 [&](const RunFinished&) { finished_ = true; }, [](const auto&) {}},
      e.payload);
}

void TelemetryStore::onAdmission(SimTime t, const Admission& a) {
  if (a.result != AdmissionResult::Admitted) return;
  if (seen_sessions_.insert(a.session).second) {
    pushBounded(new_session_times_, t, limits_.new_sessions);
    if (seen_sessions_.size() > 4 * limits_.new_sessions) seen_sessions_.clear();  // bounded; rare
  }
  if (WorkerSeries* w = worker(a.worker)) {
    ++w->admitted;
    w->last_admitted = t;
  }
}

void TelemetryStore::onRequestDone(SimTime t, const RequestDone& d) {
  pushBounded(requests_, d, limits_.requests);
  pushBounded(request_times_, t, limits_.requests);
  if (d.status != RequestStatus::Ok) return;
  if (d.ttft >= 0) ttft_series_.add(t, timeToSeconds(d.ttft));
  e2e_series_.add(t, timeToSeconds(d.e2e));
  if (d.cached_tokens < 0) return;
  const std::int64_t input = std::max<std::int64_t>(0, d.input_tokens);
  const std::int64_t cached = std::min(d.cached_tokens, input);
  const std::int64_t ceiling = std::clamp<std::int64_t>(d.ceiling_any_tokens, 0, input);
  // Sampled with the snapshots (onSnapshot): evenly, so a chart holds each value.
  hits_.add(t, input, cached, ceiling);
  if (WorkerSeries* w = worker(d.worker)) w->hits.add(t, input, cached, ceiling);
}

void TelemetryStore::onRunStarted(const RunStarted& r) {
  ++run_id_;
  run_ = r;
  policy_ = r.policy;
  knobs_.clear();
  for (const auto& [name, value] : r.knobs) knobs_[name] = value;
  finished_ = false;
  workers_.clear();
  for (const WorkerInfo& info : r.workers) {
    WorkerSeries w;
    w.info = info;
    w.gauges.fill(series());
    w.apc = series();
    w.apc_ceiling = series();
    workers_.push_back(std::move(w));
  }
  // Links appear as the snapshots name them; seed the P x D grid so it shows before any traffic.
  links_.clear();
  link_index_.clear();
  for (std::size_t p = 0; p < r.prefill.size(); ++p)
    for (std::size_t d = 0; d < r.workers.size(); ++d)
      if (r.workers[d].role == WorkerRole::Decode) linkSeries(static_cast<std::int32_t>(p), static_cast<WorkerId>(d));
}

void TelemetryStore::sampleHitRates(SimTime t) {
  // A window with no finished request has no rate: a gap, not a zero.
  hits_.advance(t);
  if (!hits_.empty()) {
    apc_series_.add(t, hits_.rate());
    apc_ceiling_series_.add(t, hits_.ceilingRate());
  }
  for (WorkerSeries& w : workers_) {
    w.hits.advance(t);
    if (w.hits.empty()) continue;
    w.apc.add(t, w.hits.rate());
    w.apc_ceiling.add(t, w.hits.ceilingRate());
  }
}

void TelemetryStore::onSnapshot(SimTime t, const Snapshot& s) {
  sampleHitRates(t);
  for (const WorkerGauges& g : s.workers) {
    WorkerSeries* w = worker(g.worker);
    if (!w) continue;
    // Live: the engine's own prefix-cache counters grew since the last snapshot: its hit rate over
    // the window, as the requests' cached tokens give it in the twin (no ceiling is known live).
    const std::int64_t queried = g.prefix_queried_tokens - w->latest.prefix_queried_tokens;
    const std::int64_t hit = g.prefix_hit_tokens - w->latest.prefix_hit_tokens;
    if (queried > 0 && hit >= 0) w->hits.add(t, queried, std::min(hit, queried), 0);
    if (w->last_snapshot >= 0 && t > w->last_snapshot) {
      const double dt = timeToSeconds(t - w->last_snapshot);
      w->kv_stores_per_s =
          static_cast<double>(std::max<std::int64_t>(0, g.kv_event_stored - w->latest.kv_event_stored)) / dt;
      w->kv_removals_per_s =
          static_cast<double>(std::max<std::int64_t>(0, g.kv_event_removed - w->latest.kv_event_removed)) / dt;
    }
    w->last_snapshot = t;
    w->latest = g;
    w->alive = g.alive;
    for (int i = 0; i < kWorkerGaugeCount; ++i) {
      const auto gauge = static_cast<WorkerGauge>(i);
      if (const auto sample = gaugeSample(gauge, g, w->admitted)) w->gauge(gauge).add(t, sample->value, sample->peak);
    }
  }
  for (const LinkGauges& g : s.links) {
    LinkSeries& link = linkSeries(g.prefill, g.worker);
    link.latest = g;
    link.gauge(LinkGauge::QueueDepth).add(t, g.queue_depth);
    link.gauge(LinkGauge::BytesInFlight).add(t, static_cast<double>(g.bytes_in_flight));
  }
}

WorkerSeries* TelemetryStore::worker(WorkerId w) {
  if (w < 0 || static_cast<std::size_t>(w) >= workers_.size()) return nullptr;
  return &workers_[static_cast<std::size_t>(w)];
}

int TelemetryStore::linkPosition(std::int32_t prefill, WorkerId worker) const {
  const auto it = link_index_.find(linkKey(prefill, worker));
  return it == link_index_.end() ? -1 : static_cast<int>(it->second);
}

LinkSeries& TelemetryStore::linkSeries(std::int32_t prefill, WorkerId worker) {
  if (const int i = linkPosition(prefill, worker); i >= 0) return links_[static_cast<std::size_t>(i)];
  link_index_.emplace(linkKey(prefill, worker), static_cast<std::uint32_t>(links_.size()));
  LinkSeries l;
  l.prefill = prefill;
  l.worker = worker;
  l.latest.prefill = prefill;
  l.latest.worker = worker;
  const std::string d = worker >= 0 && static_cast<std::size_t>(worker) < workers_.size()
                            ? workers_[static_cast<std::size_t>(worker)].info.name
                            : "W" + std::to_string(worker);
  l.name = "P" + std::to_string(prefill) + "->" + d;
  l.gauges.fill(series());
  links_.push_back(std::move(l));
  return links_.back();
}

const LinkSeries* TelemetryStore::link(std::int32_t prefill, WorkerId worker) const {
  const int i = linkPosition(prefill, worker);
  return i < 0 ? nullptr : &links_[static_cast<std::size_t>(i)];
}

std::vector<TimelineRow> TelemetryStore::timelineRows() const {
  std::vector<TimelineRow> rows;
  rows.reserve(workers_.size() + (run_ ? run_->prefill.size() : 0) + links_.size());
  for (const WorkerSeries& w : workers_) rows.push_back({TimelineRow::Worker, w.info.name});
  if (run_)
    for (const WorkerInfo& p : run_->prefill) rows.push_back({TimelineRow::Prefill, p.name});
  for (const LinkSeries& l : links_) rows.push_back({TimelineRow::Link, l.name});
  return rows;
}

int TelemetryStore::workerRow(WorkerId w) const {
  return w >= 0 && w < static_cast<WorkerId>(workers_.size()) ? static_cast<int>(w) : -1;
}

int TelemetryStore::prefillRow(std::int32_t prefill) const {
  const int count = run_ ? static_cast<int>(run_->prefill.size()) : 0;
  return prefill >= 0 && prefill < count ? static_cast<int>(workers_.size()) + prefill : -1;
}

int TelemetryStore::linkRow(std::int32_t prefill, WorkerId w) const {
  const int i = linkPosition(prefill, w);
  const int prefill_count = run_ ? static_cast<int>(run_->prefill.size()) : 0;
  return i < 0 ? -1 : static_cast<int>(workers_.size()) + prefill_count + i;
}

int TelemetryStore::rowOf(const Event& e) const {
  return std::visit(Overloaded{[&](const Eviction& x) { return workerRow(x.worker); },
                               [&](const Retraction& x) { return workerRow(x.worker); },
                               [&](const SeedStarted& x) { return workerRow(x.worker); },
                               [&](const WorkerCrashed& x) { return workerRow(x.worker); },
                               [&](const WorkerRestarted& x) { return workerRow(x.worker); },
                               [&](const Correction& x) { return workerRow(x.worker); },
                               [&](const LinkHealth& x) { return linkRow(x.prefill, x.worker); },
                               [&](const TransferFinished& x) { return linkRow(x.prefill, x.worker); },
                               [](const auto&) { return -1; }},
                    e.payload);
}

int TelemetryStore::prefillRowOf(const Event& e) const {
  const auto* seed = std::get_if<SeedStarted>(&e.payload);
  return seed ? prefillRow(seed->prefill) : -1;
}

std::pair<std::size_t, std::size_t> TelemetryStore::discreteRange(SimTime from, SimTime to) const {
  auto lo =
      std::lower_bound(discrete_.begin(), discrete_.end(), from, [](const Event& e, SimTime t) { return e.time < t; });
  auto hi = std::upper_bound(lo, discrete_.end(), to, [](SimTime t, const Event& e) { return t < e.time; });
  return {static_cast<std::size_t>(lo - discrete_.begin()), static_cast<std::size_t>(hi - discrete_.begin())};
}

void TelemetryStore::keepDecision(const RouteDecision& d) {
  // The oldest decision's storage is reused for the newest once the ring is full: no allocation
  // per event in the steady state.
  std::vector<CandidateScore> storage;
  if (ids_in_order_ && !decisions_.empty() && d.request < decisions_.back().request) {
    ids_in_order_ = false;
    for (std::size_t i = 0; i < decisions_.size(); ++i) decision_index_[decisions_[i].request] = decisions_dropped_ + i;
  }
  if (!decisions_.empty() && decisions_.size() >= limits_.decisions) {
    // Only if the index still points here: a request routed again points at its newer decision.
    if (auto it = ids_in_order_ ? decision_index_.end() : decision_index_.find(decisions_.front().request);
        it != decision_index_.end() && it->second == decisions_dropped_)
      decision_index_.erase(it);
    storage = std::move(decisions_.front().candidates);
    decisions_.pop_front();
    omitted_.pop_front();
    ++decisions_dropped_;
  }
  // Without the request's shape: the views read none of it, and it carries the prompt's layout.
  RouteDecision kept{d.request,         d.session,          d.turn,       d.policy, d.chosen,
                     d.lower_is_better, std::move(storage), d.num_fields, d.fields, RequestShape{}};
  const std::size_t n = std::min(d.candidates.size(), std::max<std::size_t>(1, limits_.decision_candidates));
  kept.candidates.assign(d.candidates.begin(), d.candidates.begin() + static_cast<std::ptrdiff_t>(n));
  // Candidates come best first; the chosen one is the first eligible, so almost always kept. If
  // not, it replaces the last kept one: the inspector must show what was chosen.
  if (d.chosen != kNoWorker && std::none_of(kept.candidates.begin(), kept.candidates.end(),
                                            [&](const CandidateScore& c) { return c.worker == d.chosen; })) {
    auto it = std::find_if(d.candidates.begin() + static_cast<std::ptrdiff_t>(n), d.candidates.end(),
                           [&](const CandidateScore& c) { return c.worker == d.chosen; });
    if (it != d.candidates.end()) kept.candidates.back() = *it;
  }
  if (limits_.decisions == 0) return;
  if (!ids_in_order_) decision_index_[d.request] = decisions_dropped_ + decisions_.size();
  decisions_.push_back(std::move(kept));
  omitted_.push_back(static_cast<std::uint32_t>(d.candidates.size() - n));
}

std::optional<std::size_t> TelemetryStore::decisionPosition(RequestId request) const {
  if (ids_in_order_) {  // the newest decision of `request`: the last one not above it
    auto it = std::upper_bound(decisions_.begin(), decisions_.end(), request,
                               [](RequestId r, const RouteDecision& d) { return r < d.request; });
    if (it == decisions_.begin() || std::prev(it)->request != request) return std::nullopt;
    return static_cast<std::size_t>(std::prev(it) - decisions_.begin());
  }
  auto it = decision_index_.find(request);
  if (it == decision_index_.end() || it->second < decisions_dropped_) return std::nullopt;
  return static_cast<std::size_t>(it->second - decisions_dropped_);
}

std::size_t TelemetryStore::candidatesOmitted(RequestId request) const {
  const auto i = decisionPosition(request);
  return i ? omitted_[*i] : 0;
}

const RouteDecision* TelemetryStore::decisionFor(RequestId request) const {
  const auto i = decisionPosition(request);
  return i ? &decisions_[*i] : nullptr;
}

long TelemetryStore::newSessionsSince(SimTime since) const {
  const auto it = std::lower_bound(new_session_times_.begin(), new_session_times_.end(), since);
  return static_cast<long>(new_session_times_.end() - it);
}

LatencyWindow TelemetryStore::latencyWindow(double window_s) const {
  LatencyWindow w;
  w.window_s = window_s;
  const SimTime from = now_ - secondsToTime(window_s);
  std::vector<double> ttft, e2e;
  auto time = request_times_.rbegin();
  for (auto it = requests_.rbegin(); it != requests_.rend() && *time >= from; ++it, ++time) {
    ++w.requests;
    if (it->status != RequestStatus::Ok) {
      ++w.failed;
      continue;
    }
    e2e.push_back(timeToSeconds(it->e2e));
    if (it->ttft >= 0) ttft.push_back(timeToSeconds(it->ttft));
  }
  w.failure_rate = w.requests > 0 ? static_cast<double>(w.failed) / static_cast<double>(w.requests) : 0;
  w.ttft_s = summarise(ttft);
  w.e2e_s = summarise(e2e);
  return w;
}

std::size_t TelemetryStore::approxMemoryBytes() const {
  std::size_t n = sizeof(*this);
  for (const WorkerSeries& w : workers_)
    for (const MinMaxSeries& s : w.gauges) n += s.memoryBytes();
  for (const LinkSeries& l : links_)
    for (const MinMaxSeries& s : l.gauges) n += s.memoryBytes();
  n += ttft_series_.memoryBytes() + e2e_series_.memoryBytes();
  n += discrete_.size() * (sizeof(Event) + 32);
  n += requests_.size() * (sizeof(RequestDone) + sizeof(SimTime));
  for (const RouteDecision& d : decisions_)
    n += sizeof(RouteDecision) + d.candidates.capacity() * sizeof(CandidateScore);
  n += decision_index_.size() * 32;  // empty while request ids come in order
  n += summary_.memoryBytes() + diagnosis_.memoryBytes();
  return n;
}

}  // namespace kvscope
