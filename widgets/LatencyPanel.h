#pragma once
// Panel 5: TTFT and E2E percentiles (p50/p90/p99) and the failure rate over a sliding window,
// and the TTFT/E2E envelopes over time.
#include <QElapsedTimer>

#include "TelemetryPanel.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace kvscope {

class TimeSeriesChart;

class LatencyPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  LatencyPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  void refreshNow(const TelemetryStore& store) override;
  double windowSeconds() const;
  void setWindowSeconds(double seconds);
  QTableWidget& table() { return *table_; }

 private:
  QComboBox* window_;
  QTableWidget* table_;
  QLabel* failures_;
  TimeSeriesChart* chart_;
  QElapsedTimer since_table_;
};

}  // namespace kvscope
