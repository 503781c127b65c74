#pragma once
// The gauges charted per worker, by name: what a snapshot says of each, under one stable key that the
// telemetry store, a what-if preview's futures, the wire (PreviewFuture.per_worker) and the console's
// per-worker charts (WorkerChartPanel) share. Adding a gauge is an enumerator and its row in
// WorkerGauge.cpp; the store keeps it, a preview forecasts it and a chart can draw it by its key.
#include <optional>
#include <string_view>

#include "core/events/Event.h"

namespace kvscope {

// The order is the order of WorkerSeries::gauge(). Admitted is cumulative (bindings admitted so far):
// the difference of two samples is the bindings a window received, which is what tells a cold
// worker from a quiet cluster.
enum class WorkerGauge { KvFraction, Running, Queued, ResidentSessions, Bindings, PendingSeeds, Admitted, Count };

inline constexpr int kWorkerGaugeCount = static_cast<int>(WorkerGauge::Count);

// For people: "KV use", "resident sessions".
const char* toString(WorkerGauge);
// A fraction (of capacity), charted as a percentage; the others are counts.
bool isFraction(WorkerGauge);
// For code, files and the wire: "kv_fraction", "resident_sessions".
const char* gaugeKey(WorkerGauge);
std::optional<WorkerGauge> workerGaugeNamed(std::string_view key);

struct GaugeSample {
  double value = 0;
  double peak = 0;  // the highest value since the previous snapshot (= value where none is kept)
};

// The gauge's sample in one snapshot of a worker; none when the snapshot does not say (a pool of
// unknown capacity has no fraction). `admitted` is the worker's bindings admitted so far, which the
// snapshot does not carry (its Admission events do).
std::optional<GaugeSample> gaugeSample(WorkerGauge, const WorkerGauges& snapshot, long admitted);

}  // namespace kvscope
