#pragma once
// Two runs side by side (File > Compare with...): which run is A and which B, the run's numbers as
// two columns with the change (green where B is better, red where worse), and the decode workers'
// shares, TTFT p90, KV peak and evictions in both. The charts draw B dashed beside A; this is the
// table of the same comparison (ViewState::comparison).
#include "widgets/common/TelemetryPanel.h"

class QLabel;
class QTableWidget;

namespace kvscope {

class RunComparePanel : public TelemetryPanel {
  Q_OBJECT
 public:
  explicit RunComparePanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore&) override {}  // the comparison changes on its own signal
  QTableWidget& summaryTable() { return *summary_; }
  QTableWidget& workerTable() { return *workers_; }
  QString heading() const;

 private:
  void fill();

  QLabel* heading_;
  QTableWidget* summary_;
  QTableWidget* workers_;
};

}  // namespace kvscope
