#pragma once
// Panel 5: TTFT and E2E percentiles (p50/p90/p99) and the failure rate over a sliding window,
// and the TTFT/E2E envelopes over time.
#include <QElapsedTimer>

#include <array>
#include <optional>

#include "core/telemetry/MinMaxSeries.h"
#include "widgets/common/TelemetryPanel.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace kvscope {

class TimeSeriesChart;
struct WhatIfResult;

class LatencyPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  LatencyPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  void refreshNow(const TelemetryStore& store) override;
  double windowSeconds() const;
  void setWindowSeconds(double seconds);
  QTableWidget& table() { return *table_; }
  // A what-if preview's finished requests, as faint points without the change and stronger ones
  // with it (null: none).
  void setPreview(const WhatIfResult* preview);
  TimeSeriesChart& chart() { return *chart_; }

 private:
  void drawPreview();

  QComboBox* window_;
  QTableWidget* table_;
  QLabel* failures_;
  TimeSeriesChart* chart_;
  QElapsedTimer since_table_;
  // Without / with the change: TTFT and E2E each (copies: the preview may be replaced meanwhile).
  std::optional<std::array<MinMaxSeries, 4>> preview_;
};

}  // namespace kvscope
