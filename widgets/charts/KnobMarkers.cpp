#include "widgets/charts/KnobMarkers.h"

#include <algorithm>

#include "core/model/Overloaded.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, const ViewState& view) {
  const SimTime from = view.from(), to = view.to();
  std::vector<TimeSeriesChart::Marker> markers;
  for (const Event& e : store.controlChanges()) {
    if (e.time < from || e.time > to) continue;
    std::visit(
        Overloaded{
            [&](const KnobChanged& k) {
              markers.push_back({e.time, QStringLiteral("%1=%2").arg(QString::fromStdString(k.name)).arg(k.new_value)});
            },
            [&](const PolicyChanged& p) {
              markers.push_back({e.time, QStringLiteral("policy %1").arg(QString::fromStdString(p.new_policy))});
            },
            [](const auto&) {}},
        e.payload);
  }
  for (const RunNote& n : view.notes())
    if (n.time >= from && n.time <= to)
      markers.push_back({n.time, QStringLiteral("note: %1").arg(QString::fromStdString(n.text).section('\n', 0, 0))});
  std::stable_sort(markers.begin(), markers.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  return markers;
}

}  // namespace kvscope
