#pragma once
// Panel 2: per-worker KV pool occupancy over time against the rho * capacity admission line, and
// resident sessions against the session soft cap; each pixel column the true min and max, so a
// brief 100% is never lost. Both lines are handles: dragging one sets the knob's pending value
// (knobDragged while moving, then the knobs panel holds it until Apply). A what-if preview's two
// futures are drawn as ghosts: without the pending change faint, with it stronger.
// With more than kBandAbove decode workers, only some are lines: the ones selected in the worker
// strip (ViewState::selectedWorkers), else the kDefaultLines fullest now; the others are one band
// per chart, per pixel column their min, median and max (WorkerBand).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/TelemetryPanel.h"

namespace kvscope {

struct WhatIfResult;

class KvPoolPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  static constexpr int kBandAbove = 8;
  static constexpr int kDefaultLines = 3;
  static constexpr int kMaxLines = 8;

  KvPoolPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  TimeSeriesChart& occupancyChart() { return *occupancy_; }
  TimeSeriesChart& sessionsChart() { return *sessions_; }

  // Knob values waiting for Apply: the lines show them instead of the run's.
  void setPendingKnobs(const std::map<std::string, double>& pending);
  // The preview's futures (null: none). The panel keeps a copy of what it draws.
  void setPreview(const WhatIfResult* preview);
  bool showsPreview() const { return has_preview_; }
  // Store worker indices drawn as lines, and those folded into the band (empty: no band).
  const std::vector<int>& lineWorkers() const { return workers_; }
  const std::vector<int>& bandWorkers() const { return band_workers_; }

 signals:
  void knobDragged(const std::string& knob, double value);

 private:
  void rebuild(const TelemetryStore& store);
  void drawPreview();
  std::vector<int> chooseLines(const TelemetryStore& store);
  void drawBands(const TelemetryStore& store);

  TimeSeriesChart* occupancy_;
  TimeSeriesChart* sessions_;
  std::vector<int> decode_;        // store worker index of every decode worker
  std::vector<int> workers_;       // store worker index of each chart series
  std::vector<int> positions_;     // each series' position among the decode workers (a preview's index)
  std::vector<int> band_workers_;  // store worker indices in the band
  std::vector<QColor> colors_;
  std::uint64_t run_id_ = ~0ull;
  std::map<std::string, double> pending_;
  bool has_preview_ = false;
  std::vector<MinMaxSeries> preview_kv_[2], preview_sessions_[2];  // [0] without, [1] with the change
  int ghost_base_ = 0;  // index of the first ghost series (after the workers')
};

// Knob and policy changes in `store` as chart markers (shared by every time chart).
std::vector<TimeSeriesChart::Marker> knobMarkers(const TelemetryStore& store, SimTime from, SimTime to);

}  // namespace kvscope
