#include "core/metrics/RunSideBySide.h"

#include <algorithm>
#include <functional>

namespace kvscope {

namespace {
using Metric = std::function<std::optional<double>(const RunSummary&)>;

std::optional<double> latency(const SampleSummary& s, double SampleSummary::*field) {
  if (s.count == 0) return std::nullopt;
  return s.*field;
}

bool serves(const WorkerSummary& w) { return w.role != "prefill"; }

const WorkerSummary* find(const RunSummary& run, const std::string& id) {
  for (const WorkerSummary& w : run.workers)
    if (w.id == id) return &w;
  return nullptr;
}

std::optional<double> workerTtftP90(const RunSummary& run, const WorkerSummary* w) {
  if (!w) return std::nullopt;
  const auto index = static_cast<std::size_t>(w - run.workers.data());
  const auto& p90 = run.lab.worker_ttft_p90_s;
  return index < p90.size() ? p90[index] : std::nullopt;
}

// One row: `metric` of each run (and of the baseline, when there is one).
struct Rows {
  const RunSummary& a;
  const RunSummary& b;
  const RunSummary* base;
  SideBySideRow row(std::string label, const Metric& metric, int decimals, bool lower_is_better) const {
    SideBySideRow r;
    r.label = std::move(label);
    r.a = metric(a);
    r.b = metric(b);
    if (base) r.base = metric(*base);
    r.decimals = decimals;
    r.lower_is_better = lower_is_better;
    return r;
  }
};

// A worker's row: the WorkerSummary field of the worker named `id` in each run (none where it is absent).
Metric ofWorker(const std::string& id, std::function<double(const WorkerSummary&)> field) {
  return [id, field = std::move(field)](const RunSummary& run) -> std::optional<double> {
    const WorkerSummary* w = find(run, id);
    if (!w) return std::nullopt;
    return field(*w);
  };
}
}  // namespace

std::optional<double> SideBySideRow::changeFrom(std::optional<double> from) const {
  if (!from || !b) return std::nullopt;
  return *b - *from;
}

std::optional<double> SideBySideRow::relativeChangeFrom(std::optional<double> from) const {
  if (!from || !b || *from == 0) return std::nullopt;
  return *b / *from - 1;
}

RunSideBySide RunSideBySide::of(const RunSummary& a, const RunSummary& b, const RunSummary* base) {
  const Rows rows{a, b, base};
  RunSideBySide out;
  auto& s = out.summary;
  const auto count = [](long RunSummary::*field) {
    return [field](const RunSummary& r) -> std::optional<double> { return static_cast<double>(r.*field); };
  };
  const auto percentile = [](SampleSummary RunSummary::*sample, double SampleSummary::*field) {
    return [sample, field](const RunSummary& r) { return latency(r.*sample, field); };
  };
  s.push_back(rows.row("requests", count(&RunSummary::total), 0, false));
  s.push_back(rows.row("completed", count(&RunSummary::completed), 0, false));
  s.push_back(rows.row(
      "failure rate (%)", [](const RunSummary& r) { return r.failure_rate * 100; }, 1, true));
  s.push_back(rows.row("TTFT p50 (s)", percentile(&RunSummary::ttft_s, &SampleSummary::p50), 3, true));
  s.push_back(rows.row("TTFT p90 (s)", percentile(&RunSummary::ttft_s, &SampleSummary::p90), 3, true));
  s.push_back(rows.row("E2E p50 (s)", percentile(&RunSummary::e2e_s, &SampleSummary::p50), 3, true));
  s.push_back(rows.row("E2E p90 (s)", percentile(&RunSummary::e2e_s, &SampleSummary::p90), 3, true));
  s.push_back(rows.row(
      "APC (%)",
      [](const RunSummary& r) -> std::optional<double> {
        if (!r.lab.apc) return std::nullopt;
        return *r.lab.apc * 100;
      },
      1, false));
  s.push_back(rows.row(
      "worker TTFT p90, max (s)", [](const RunSummary& r) { return r.lab.worker_ttft_p90_max_s; }, 3, true));
  s.push_back(rows.row("evictions", count(&RunSummary::eviction_count), 0, true));
  s.push_back(rows.row("retractions", count(&RunSummary::retractions), 0, true));
  s.push_back(rows.row("reseeds", count(&RunSummary::reseeds), 0, true));
  s.push_back(rows.row(
      "findings", [](const RunSummary& r) { return static_cast<double>(r.diagnosis.size()); }, 0, true));
  s.push_back(rows.row(
      "run time (s)", [](const RunSummary& r) { return r.sim_seconds; }, 1, false));

  std::vector<std::string> ids;
  for (const RunSummary* run : {&a, &b})
    for (const WorkerSummary& w : run->workers)
      if (serves(w) && std::find(ids.begin(), ids.end(), w.id) == ids.end()) ids.push_back(w.id);
  for (const std::string& id : ids) {
    WorkerSideBySide w;
    w.worker = id;
    w.share = rows.row("share (%)", ofWorker(id, [](const WorkerSummary& s) { return s.share * 100; }), 1, false);
    w.ttft_p90 = rows.row(
        "TTFT p90 (s)", [id](const RunSummary& r) { return workerTtftP90(r, find(r, id)); }, 3, true);
    w.kv_peak =
        rows.row("KV peak (%)", ofWorker(id, [](const WorkerSummary& s) { return s.kv_peak_frac * 100; }), 1, true);
    w.evictions = rows.row(
        "evictions", ofWorker(id, [](const WorkerSummary& s) { return static_cast<double>(s.evictions); }), 0, true);
    out.workers.push_back(std::move(w));
  }
  return out;
}

}  // namespace kvscope
