#pragma once
// Per-worker gauges over time, one chart per gauge: "chart X per D" is a WorkerChartPanel of X's
// gauge (WorkerGauge.h) and a line in the panel registry (app/gui/PanelRegistry.cpp).
// Up to kBandAbove decode workers, one line each. Beyond, lines only for the workers selected in the
// worker strip (ViewState::selectedWorkers), else kDefaultLines: the strip's worst
// (ViewState::worstWorkers), then the highest now on the first chart's gauge; the others are one
// band per chart, per pixel column their min, median and max (WorkerBand),
// so a spike of any worker still shows. A what-if preview's two futures of each chart's gauge are
// ghosts of its lines: without the change faint, with it stronger. Knob and policy changes are
// markers on every chart; a subclass draws its own thresholds in decorate() (KvPoolPanel). With a
// run compared (ViewState::comparison), each line has its twin from that run, dashed, matched by
// the worker's name, and a chart whose spec asks for it gets a difference chart below: per line and
// pixel column, this run's value minus the compared run's (the columns' mid values).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/telemetry/WorkerGauge.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/common/TelemetryPanel.h"

namespace kvscope {

struct ComparedRun;
struct WhatIfResult;
class TelemetryStore;

struct WorkerChartSpec {
  WorkerGauge gauge = WorkerGauge::KvFraction;
  QString title;                                     // with its unit: "KV pool use (%)"
  double scale = 1;                                  // 100 draws a fraction as a percentage
  int stretch = 1;                                   // the chart's share of the panel's height
  bool integer_values = false;                       // y ticks at whole numbers (counts)
  std::optional<std::pair<double, double>> y_range;  // fixed; otherwise from 0 to the data
  QString unit;                                      // after a value the cursor reads out: "%", "requests"
  bool difference_when_compared = false;             // a chart of A - B below it while a run is compared

  // The gauge as people read it: "Queued requests per D", a fraction as 0-100 %, counts whole.
  static WorkerChartSpec of(WorkerGauge gauge);
};

class WorkerChartPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  static constexpr int kBandAbove = 8;
  static constexpr int kDefaultLines = 3;
  static constexpr int kMaxLines = 8;

  WorkerChartPanel(ViewState& view, std::vector<WorkerChartSpec> charts, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;

  int chartCount() const { return static_cast<int>(charts_.size()); }
  TimeSeriesChart& chart(int index) { return *charts_[static_cast<std::size_t>(index)].view; }
  // The A - B chart of chart `index` (null when its spec has none); shown only while comparing.
  TimeSeriesChart* differenceChart(int index) { return charts_[static_cast<std::size_t>(index)].difference; }
  const WorkerChartSpec& spec(int index) const { return charts_[static_cast<std::size_t>(index)].spec; }

  // The preview's futures (null: none). The panel keeps a copy of what it draws.
  void setPreview(const WhatIfResult* preview);
  bool showsPreview() const { return has_preview_; }
  // Store worker indices drawn as lines, and those folded into the band (empty: no band).
  const std::vector<int>& lineWorkers() const { return workers_; }
  const std::vector<int>& bandWorkers() const { return band_workers_; }

 protected:
  // After the series each refresh: what a subclass draws over its charts (thresholds, handles).
  virtual void decorate(const TelemetryStore& store);

 private:
  struct Chart {
    WorkerChartSpec spec;
    TimeSeriesChart* view = nullptr;
    TimeSeriesChart* difference = nullptr;
    std::vector<MinMaxSeries> future[2];  // a preview's series per decode worker: [0] without, [1] with
  };
  std::vector<int> chooseLines(const TelemetryStore& store);
  void rebuild(const TelemetryStore& store);
  void drawBands(const TelemetryStore& store);
  void drawPreview();
  void drawCompared();

  std::vector<Chart> charts_;
  std::vector<int> decode_;        // store worker index of every decode worker
  std::vector<int> workers_;       // store worker index of each line
  std::vector<int> positions_;     // each line's position among the decode workers (a preview's index)
  std::vector<int> band_workers_;  // store worker indices in the band
  std::uint64_t run_id_ = ~0ull;
  bool has_preview_ = false;
  int ghost_base_ = 0;  // index of the first ghost series (after the lines)
  // The compared run (or null) the series were built for, and each line's worker index in its store
  // (-1: that run had no worker of the name); their series come after the ghosts.
  const ComparedRun* compared_ = nullptr;
  std::vector<int> compared_workers_;
  int compared_base_ = 0;
};

}  // namespace kvscope
