#pragma once
// Panel 1: per decode worker load, with the starving (cold-D) worker marked.
#include "TelemetryPanel.h"

class QTableView;

namespace kvscope {

class DecodeLoadModel;

class DecodeLoadPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  DecodeLoadPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  DecodeLoadModel& model() { return *model_; }

 private:
  DecodeLoadModel* model_;
  QTableView* table_;
};

}  // namespace kvscope
