#include "widgets/charts/KnobMarkers.h"

#include "core/model/Overloaded.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, SimTime from, SimTime to) {
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
  return markers;
}

}  // namespace kvscope
