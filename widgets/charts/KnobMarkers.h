#pragma once
// Knob and policy changes as markers on the time charts: every chart marks where the run changed,
// and where the operator left a note (ViewState::notes).
#include <vector>

#include "widgets/charts/TimeSeriesChart.h"

namespace kvscope {

class TelemetryStore;
class ViewState;

// The changes and notes in the view's range ("K=200", "policy lmetric", "note: D2 cold").
std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, const ViewState& view);

}  // namespace kvscope
