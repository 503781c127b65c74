#pragma once
// Panel 2: per-worker KV pool occupancy over time against the rho * capacity admission line, and
// resident sessions against the session soft cap; min/max decimated so a brief 100% is never lost.
#include <cstdint>
#include <vector>

#include "TelemetryPanel.h"
#include "TimeSeriesChart.h"

namespace kvscope {

class KvPoolPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  KvPoolPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  TimeSeriesChart& occupancyChart() { return *occupancy_; }
  TimeSeriesChart& sessionsChart() { return *sessions_; }

 private:
  void rebuild(const TelemetryStore& store);

  TimeSeriesChart* occupancy_;
  TimeSeriesChart* sessions_;
  std::vector<int> workers_;  // store worker index of each chart series
  std::uint64_t run_id_ = ~0ull;
};

// Knob and policy changes in `store` as chart markers (shared by every time chart).
std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, SimTime from, SimTime to);

}  // namespace kvscope
