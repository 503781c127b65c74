#pragma once
// The metrics the lab judges a run by (core/metrics/LabMetrics.h), as its figures show them: the
// prefix-cache hit rate (APC) of each worker over time against what an unbounded cache would hit,
// the ECDF of uncached tokens per request (log x), the hit rate by turn, the WARM / MEDIUM / HEAVY
// breakdown and each worker's TTFT p90, under one line of the run's numbers.
#include <QElapsedTimer>

#include "widgets/common/TelemetryPanel.h"

class QLabel;
class QSplitter;
class QTableWidget;

namespace kvscope {

class EcdfPlot;
class TimeSeriesChart;
class TurnBarPlot;

class LabMetricsPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  explicit LabMetricsPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  void refreshNow(const TelemetryStore& store) override;

  // Up to this many workers get a line of their own on the APC chart; the rest form the band.
  static constexpr int kLinesAbove = 8;

  TimeSeriesChart& apcChart() { return *apc_; }
  EcdfPlot& ecdf() { return *ecdf_; }
  TurnBarPlot& byTurn() { return *by_turn_; }
  QTableWidget& classes() { return *classes_; }
  QTableWidget& workers() { return *workers_; }
  QLabel& headline() { return *headline_; }

 private:
  void rebuildSeries(const TelemetryStore& store);
  void refreshTables(const TelemetryStore& store);

  QLabel* headline_;
  QSplitter* figures_;
  TimeSeriesChart* apc_;
  EcdfPlot* ecdf_;
  TurnBarPlot* by_turn_;
  QTableWidget* classes_;
  QTableWidget* workers_;
  std::uint64_t run_id_ = ~0ull;
  int compared_series_ = 0;  // the compared run's "all" (ViewState::comparison)
  std::size_t lined_workers_ = 0;
  QElapsedTimer since_tables_;
};

}  // namespace kvscope
