#pragma once
// The what-if preview's own dock: its numbers (WhatIfTable) where they have room to be read, beside
// the charts that draw its futures, instead of squeezed under the knob list. Says how to get one
// while nothing is pending.
#include "widgets/common/TelemetryPanel.h"

class QLabel;

namespace kvscope {

class WhatIfTable;

class WhatIfPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  WhatIfPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore&) override {}  // filled by the preview, not by the store
  WhatIfTable& table() { return *table_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QLabel* hint_;
  WhatIfTable* table_;
};

}  // namespace kvscope
