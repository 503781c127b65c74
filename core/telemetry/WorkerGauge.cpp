#include "core/telemetry/WorkerGauge.h"

#include <algorithm>
#include <array>

namespace kvscope {

namespace {

struct GaugeRow {
  const char* key;
  const char* label;
  std::optional<GaugeSample> (*sample)(const WorkerGauges&, long admitted);
};

GaugeSample plain(double v) { return {v, v}; }

const std::array<GaugeRow, kWorkerGaugeCount>& rows() {
  static const std::array<GaugeRow, kWorkerGaugeCount> table{{
      {"kv_fraction", "KV use",
       [](const WorkerGauges& g, long) -> std::optional<GaugeSample> {
         if (g.kv_capacity <= 0) return std::nullopt;
         const auto cap = static_cast<double>(g.kv_capacity);
         return GaugeSample{static_cast<double>(g.kv_used) / cap,
                            static_cast<double>(std::max(g.kv_peak, g.kv_used)) / cap};
       }},
      {"running", "running requests",
       [](const WorkerGauges& g, long) -> std::optional<GaugeSample> { return plain(g.running); }},
      {"queued", "queued requests",
       [](const WorkerGauges& g, long) -> std::optional<GaugeSample> { return plain(g.queued); }},
      {"resident_sessions", "resident sessions",
       [](const WorkerGauges& g, long) -> std::optional<GaugeSample> { return plain(g.resident_sessions); }},
      {"bindings", "bound sessions",
       [](const WorkerGauges& g, long) -> std::optional<GaugeSample> { return plain(g.bindings); }},
      {"pending_seeds", "pending seeds",
       [](const WorkerGauges& g, long) -> std::optional<GaugeSample> { return plain(g.pending_seeds); }},
      {"admitted", "bindings admitted",
       [](const WorkerGauges&, long admitted) -> std::optional<GaugeSample> {
         return plain(static_cast<double>(admitted));
       }},
  }};
  return table;
}

const GaugeRow* row(WorkerGauge g) {
  const auto i = static_cast<std::size_t>(g);
  return i < rows().size() ? &rows()[i] : nullptr;
}

}  // namespace

const char* toString(WorkerGauge g) {
  const GaugeRow* r = row(g);
  return r ? r->label : "?";
}

bool isFraction(WorkerGauge g) { return g == WorkerGauge::KvFraction; }

const char* gaugeKey(WorkerGauge g) {
  const GaugeRow* r = row(g);
  return r ? r->key : "?";
}

std::optional<WorkerGauge> workerGaugeNamed(std::string_view key) {
  for (std::size_t i = 0; i < rows().size(); ++i)
    if (key == rows()[i].key) return static_cast<WorkerGauge>(i);
  return std::nullopt;
}

std::optional<GaugeSample> gaugeSample(WorkerGauge g, const WorkerGauges& snapshot, long admitted) {
  const GaugeRow* r = row(g);
  return r ? r->sample(snapshot, admitted) : std::nullopt;
}

}  // namespace kvscope
