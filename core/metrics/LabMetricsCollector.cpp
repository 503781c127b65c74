#include "core/metrics/LabMetricsCollector.h"

#include <algorithm>
#include <cstring>

#include "core/model/Overloaded.h"
#include "core/model/Saturating.h"

namespace kvscope {

namespace {
int classIndex(const char* name) {
  return std::strcmp(name, "WARM") == 0 ? 0 : std::strcmp(name, "MEDIUM") == 0 ? 1 : 2;
}
constexpr const char* kClassNames[] = {"WARM", "MEDIUM", "HEAVY"};

std::optional<double> ratio(std::int64_t a, std::int64_t b) {
  if (b <= 0) return std::nullopt;
  return static_cast<double>(a) / static_cast<double>(b);
}
}  // namespace

void LabMetricsCollector::observeShape(const RequestDone& d, SimTime fired, SimTime end) {
  ++requests_;
  inputs_.add(static_cast<double>(std::max<std::int64_t>(0, d.input_tokens)));
  outputs_.add(static_cast<double>(std::max<std::int64_t>(0, d.output_tokens)));
  if (d.input_tokens > LabMetrics::kLongInputTokens) ++long_inputs_;
  if (d.ceiling_any_tokens >= 0 && d.ceiling_intra_tokens >= 0) {
    addClamped(reuse_any_, d.ceiling_any_tokens);
    addClamped(reuse_intra_, std::min(d.ceiling_intra_tokens, d.ceiling_any_tokens));
  }
  // Sessions are counted by their turns, not kept: a first turn opens one, a second makes it multi-turn.
  first_turns_ += d.turn == 1;
  second_turns_ += d.turn == 2;
  if (sessions_.size() >= kMaxSessionsTracked && !sessions_.contains(d.session)) return;
  SessionSeen& s = sessions_[d.session];
  if (d.turn == s.last_turn + 1 && s.last_end >= 0)
    inter_turn_.add(timeToSeconds(std::max<SimTime>(0, fired - s.last_end)));
  if (d.turn > s.last_turn) {
    s.last_turn = d.turn;
    s.last_end = end;
  }
}

LabMetricsCollector::PerWorker& LabMetricsCollector::worker(WorkerId w) {
  if (w >= static_cast<WorkerId>(workers_.size())) workers_.resize(static_cast<std::size_t>(w) + 1);
  return workers_[static_cast<std::size_t>(w)];
}

void LabMetricsCollector::onEvent(const Event& e) {
  if (const auto* r = std::get_if<RunStarted>(&e.payload)) {
    *this = LabMetricsCollector{};
    offered_ = r->offered_requests;
    trace_window_s_ = r->trace_window_s;
    workers_.resize(r->workers.size());
    return;
  }
  const auto* d = std::get_if<RequestDone>(&e.payload);
  if (!d) return;
  // Recorded numbers are not checked like a Report's: an e2e beyond the event's time must not wrap.
  const SimTime fired = e.time - std::clamp<SimTime>(d->e2e, 0, std::max<SimTime>(0, e.time));
  first_fired_ = any_fired_ ? std::min(first_fired_, fired) : fired;
  last_end_ = any_fired_ ? std::max(last_end_, e.time) : e.time;
  any_fired_ = true;
  slip_.add(timeToSeconds(std::max<SimTime>(0, d->dispatch_slip)));
  observeShape(*d, fired, e.time);
  if (d->status != RequestStatus::Ok) return;
  ++completed_;
  addClamped(input_done_, d->input_tokens);
  addClamped(output_done_, d->output_tokens);
  if (d->output_tokens > 1 && d->ttft >= 0)
    tpot_.add(timeToSeconds(d->e2e - d->ttft) / static_cast<double>(d->output_tokens - 1));
  if (d->worker >= 0) {
    PerWorker& w = worker(d->worker);
    ++w.completed;
    if (d->ttft >= 0) w.ttft.add(timeToSeconds(d->ttft));
  }
  if (d->cached_tokens < 0) return;
  const std::int64_t input = std::max<std::int64_t>(0, d->input_tokens);
  const std::int64_t cached = std::min(d->cached_tokens, input);
  ++known_;
  addClamped(prompt_, input);
  addClamped(cached_, cached);
  addClamped(ceiling_intra_, std::clamp<std::int64_t>(d->ceiling_intra_tokens, 0, input));
  addClamped(ceiling_any_, std::clamp<std::int64_t>(d->ceiling_any_tokens, 0, input));
  uncached_.add(static_cast<double>(input - cached));
  Tokens& turn = by_turn_[std::clamp(d->turn, 1, LabMetrics::kMaxTurnIndex)];
  addClamped(turn.prompt, input);
  addClamped(turn.cached, cached);
  ClassSamples& c = classes_[static_cast<std::size_t>(classIndex(LabMetrics::classOf(input, cached)))];
  ++c.count;
  if (d->ttft >= 0) c.ttft.add(timeToSeconds(d->ttft));
  c.e2e.add(timeToSeconds(d->e2e));
}

LabMetrics LabMetricsCollector::metrics() const {
  LabMetrics m;
  m.apc = ratio(cached_, prompt_);
  m.apc_ceiling_intra = ratio(ceiling_intra_, prompt_);
  m.apc_ceiling_any = ratio(ceiling_any_, prompt_);
  if (tpot_.count() > 0) m.tpot_s = tpot_.summary();
  if (uncached_.count() > 0) {
    m.uncached_tokens = uncached_.summary();
    for (int q = 0; q <= 100; ++q) m.uncached_quantiles.push_back(uncached_.quantile(q));
  }
  for (const auto& [turn, t] : by_turn_)
    if (auto r = ratio(t.cached, t.prompt)) m.apc_by_turn[turn] = *r;
  std::vector<double> p90s;
  long most = -1, fewest = -1;
  for (const PerWorker& w : workers_) {
    m.worker_completed.push_back(w.completed);
    m.worker_ttft_p90_s.push_back(w.ttft.count() > 0 ? std::optional(w.ttft.summary().p90) : std::nullopt);
    if (w.ttft.count() > 0) p90s.push_back(w.ttft.summary().p90);
    most = std::max(most, w.completed);
    fewest = fewest < 0 ? w.completed : std::min(fewest, w.completed);
  }
  if (!p90s.empty()) {
    std::sort(p90s.begin(), p90s.end());
    m.worker_ttft_p90_median_s = percentileSorted(p90s, 50);
    m.worker_ttft_p90_max_s = p90s.back();
  }
  if (fewest > 0) m.request_balance = static_cast<double>(most) / static_cast<double>(fewest);
  if (any_fired_ && last_end_ > first_fired_) {
    const double makespan = timeToSeconds(last_end_ - first_fired_);
    m.decode_tps = static_cast<double>(output_done_) / makespan;
    m.total_tps = (static_cast<double>(input_done_) + static_cast<double>(output_done_)) / makespan;
    if (trace_window_s_ > 0) m.wall_amplification = makespan / trace_window_s_;
  }
  if (offered_ > 0) m.completion_rate = static_cast<double>(completed_) / static_cast<double>(offered_);
  if (slip_.count() > 0) m.dispatch_slip_s = slip_.summary();
  WorkloadShape& w = m.workload;
  w.requests = requests_;
  w.sessions = first_turns_;
  if (inputs_.count() > 0) {
    w.input_tokens = inputs_.summary();
    w.output_tokens = outputs_.summary();
    w.share_over_32k = static_cast<double>(long_inputs_) / static_cast<double>(requests_);
  }
  if (first_turns_ > 0)
    w.single_turn_share = std::max(0.0, 1.0 - static_cast<double>(second_turns_) / static_cast<double>(first_turns_));
  if (inter_turn_.count() > 0) {
    w.inter_turn_p25_s = inter_turn_.quantile(25);
    w.inter_turn_p50_s = inter_turn_.quantile(50);
    w.inter_turn_p75_s = inter_turn_.quantile(75);
    w.inter_turn_p90_s = inter_turn_.quantile(90);
  }
  w.reuse_intra_share = ratio(reuse_intra_, reuse_any_);
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    const ClassSamples& c = classes_[i];
    if (known_ == 0) break;
    RequestClassStats s;
    s.count = c.count;
    if (c.ttft.count() > 0) s.ttft_p90_s = c.ttft.summary().p90;
    if (c.e2e.count() > 0) s.e2e_p90_s = c.e2e.summary().p90;
    m.request_classes[kClassNames[i]] = s;
  }
  return m;
}

std::size_t LabMetricsCollector::memoryBytes() const {
  std::size_t n = sizeof(*this) + tpot_.memoryBytes() + uncached_.memoryBytes() + slip_.memoryBytes() +
                  by_turn_.size() * (sizeof(int) + sizeof(Tokens) + 32);
  for (const auto& w : workers_) n += sizeof(w) + w.ttft.memoryBytes();
  for (const auto& c : classes_) n += c.ttft.memoryBytes() + c.e2e.memoryBytes();
  n += inputs_.memoryBytes() + outputs_.memoryBytes() + inter_turn_.memoryBytes() +
       sessions_.capacity() * (sizeof(SessionId) + sizeof(SessionSeen) + 1);
  return n;
}

}  // namespace kvscope
