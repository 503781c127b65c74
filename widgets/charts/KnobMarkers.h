#pragma once
// Knob and policy changes as markers on the time charts: every chart marks where the run changed.
#include <vector>

#include "widgets/charts/TimeSeriesChart.h"

namespace kvscope {

class TelemetryStore;

// The changes in [from, to] ("K=200", "policy lmetric").
std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, SimTime from, SimTime to);

}  // namespace kvscope
