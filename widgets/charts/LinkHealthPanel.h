#pragma once
// Panel 4: Mooncake link health, the P x D grid and each link's last failure reason.
#include "widgets/common/TelemetryPanel.h"

class QLabel;
class QTableView;

namespace kvscope {

class LinkHealthModel;

class LinkHealthPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  LinkHealthPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  LinkHealthModel& model() { return *model_; }
  QString failureText() const;

 private:
  LinkHealthModel* model_;
  QTableView* grid_;
  QLabel* failures_;
};

}  // namespace kvscope
