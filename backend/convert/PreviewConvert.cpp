#include "backend/convert/PreviewConvert.h"

#include <cmath>

#include "backend/convert/EventConvert.h"

namespace kvscope {

namespace {

void seriesToProto(const MinMaxSeries& in, v1::SampledSeries* out) {
  // A preview's horizon is far shorter than the ring: every sample is still raw.
  for (const RawSample& s : in.raw()) {
    out->add_time_us(s.time);
    out->add_value(s.value);
    out->add_peak(s.peak);
  }
}

void summaryToProto(const RunSummary& in, v1::PreviewSummary* out) {
  out->set_requests(in.total);
  out->set_completed(in.completed);
  out->set_failed(in.failed);
  out->set_ttft_p90_s(in.ttft_s.p90);
  out->set_e2e_p90_s(in.e2e_s.p90);
  out->set_evictions(in.eviction_count);
  for (const WorkerSummary& w : in.workers) {
    auto* worker = out->add_workers();
    worker->set_id(w.id);
    worker->set_role(w.role);
    worker->set_bindings(w.bindings);
    worker->set_share(w.share);
  }
}

void futureToProto(const WhatIfFuture& in, v1::PreviewFuture* out) {
  for (const std::string& w : in.workers) out->add_workers(w);
  for (const auto& [gauge, series] : in.per_worker) {
    auto* g = out->add_per_worker();
    g->set_gauge(gauge);
    for (const MinMaxSeries& s : series) seriesToProto(s, g->add_workers());
  }
  seriesToProto(in.ttft, out->mutable_ttft());
  seriesToProto(in.e2e, out->mutable_e2e());
  summaryToProto(in.horizon, out->mutable_horizon());
  out->set_error(in.error);
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool finite(double v) { return std::isfinite(v); }

bool seriesFromProto(const v1::SampledSeries& in, SimTime from, SimTime to, const std::string& field, MinMaxSeries* out,
                     std::string* error) {
  if (in.value_size() != in.time_us_size() || in.peak_size() != in.time_us_size())
    return fail(error, field + ": " + std::to_string(in.time_us_size()) + " times, " + std::to_string(in.value_size()) +
                           " values and " + std::to_string(in.peak_size()) + " peaks; expected one of each per sample");
  SimTime previous = from;
  for (int i = 0; i < in.time_us_size(); ++i) {
    const SimTime t = in.time_us(i);
    const std::string at = field + ".time_us[" + std::to_string(i) + "]";
    if (t < previous)
      return fail(error,
                  at + ": " + std::to_string(t) + " goes back in time (previous " + std::to_string(previous) + ")");
    if (t > to) return fail(error, at + ": " + std::to_string(t) + " is after the horizon's end " + std::to_string(to));
    if (!finite(in.value(i)) || !finite(in.peak(i)))
      return fail(error, field + ".value[" + std::to_string(i) + "]: not a finite number");
    previous = t;
  }
  for (int i = 0; i < in.time_us_size(); ++i) out->add(in.time_us(i), in.value(i), std::max(in.value(i), in.peak(i)));
  return true;
}

bool futureFromProto(const v1::PreviewFuture& in, SimTime from, SimTime to, const std::string& field, WhatIfFuture* out,
                     std::string* error) {
  if (in.workers_size() > kMaxWireWorkers)
    return fail(error, field + ".workers: " + std::to_string(in.workers_size()) + " workers; at most " +
                           std::to_string(kMaxWireWorkers));
  WhatIfFuture f;
  f.workers.assign(in.workers().begin(), in.workers().end());
  if (in.per_worker_size() > 4 * kWorkerGaugeCount)
    return fail(error, field + ".per_worker: " + std::to_string(in.per_worker_size()) + " gauges; at most " +
                           std::to_string(4 * kWorkerGaugeCount));
  for (int g = 0; g < in.per_worker_size(); ++g) {
    const v1::WorkerGaugeSeries& gauge = in.per_worker(g);
    const std::string at = field + ".per_worker[" + std::to_string(g) + "]";
    if (!workerGaugeNamed(gauge.gauge())) continue;  // a gauge this console does not chart
    if (f.per_worker.count(gauge.gauge())) return fail(error, at + ".gauge: '" + gauge.gauge() + "' comes twice");
    if (gauge.workers_size() != in.workers_size())
      return fail(error, at + ": " + std::to_string(gauge.workers_size()) + " series for " +
                             std::to_string(in.workers_size()) + " workers; expected one per worker");
    std::vector<MinMaxSeries>& series = f.per_worker[gauge.gauge()];
    // The console's own preview sizes (WhatIfPreview's FutureSink), so both draw alike.
    for (int i = 0; i < gauge.workers_size(); ++i) {
      series.emplace_back(1024, 4, 4, 4096);
      if (!seriesFromProto(gauge.workers(i), from, to, at + ".workers[" + std::to_string(i) + "]", &series.back(),
                           error))
        return false;
    }
  }
  if (!seriesFromProto(in.ttft(), from, to, field + ".ttft", &f.ttft, error)) return false;
  if (!seriesFromProto(in.e2e(), from, to, field + ".e2e", &f.e2e, error)) return false;
  const v1::PreviewSummary& h = in.horizon();
  if (!finite(h.ttft_p90_s()) || !finite(h.e2e_p90_s()))
    return fail(error, field + ".horizon: a p90 is not a finite number");
  f.horizon.total = static_cast<long>(h.requests());
  f.horizon.completed = static_cast<long>(h.completed());
  f.horizon.failed = static_cast<long>(h.failed());
  f.horizon.ttft_s.p90 = h.ttft_p90_s();
  f.horizon.e2e_s.p90 = h.e2e_p90_s();
  f.horizon.eviction_count = static_cast<long>(h.evictions());
  if (h.workers_size() > 2 * kMaxWireWorkers)
    return fail(error, field + ".horizon.workers: " + std::to_string(h.workers_size()) + " workers; too many");
  for (const v1::PreviewWorker& w : h.workers()) {
    if (!finite(w.share())) return fail(error, field + ".horizon.workers: a share is not a finite number");
    f.horizon.workers.push_back(
        WorkerSummary{w.id(), w.role(), static_cast<long>(w.bindings()), w.share(), 0, 0, 0, 0});
  }
  f.error = in.error();
  *out = std::move(f);
  return true;
}

}  // namespace

void toProto(const WhatIfResult& in, v1::PreviewResponse* out) {
  out->set_from_us(in.from);
  out->set_to_us(in.to);
  out->set_wall_ms(in.wall_ms);
  futureToProto(in.without, out->mutable_baseline());
  futureToProto(in.with, out->mutable_changed());
}

bool fromProto(const v1::PreviewResponse& in, WhatIfResult* out, std::string* error) {
  if (in.from_us() < 0 || in.to_us() < in.from_us())
    return fail(error, "from_us/to_us: [" + std::to_string(in.from_us()) + ", " + std::to_string(in.to_us()) +
                           "] is not a time span");
  WhatIfResult r;
  r.from = in.from_us();
  r.to = in.to_us();
  r.wall_ms = finite(in.wall_ms()) ? in.wall_ms() : 0;
  if (!futureFromProto(in.baseline(), r.from, r.to, "baseline", &r.without, error)) return false;
  if (!futureFromProto(in.changed(), r.from, r.to, "changed", &r.with, error)) return false;
  *out = std::move(r);
  return true;
}

}  // namespace kvscope
