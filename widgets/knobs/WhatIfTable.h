#pragma once
// The what-if preview's numbers beside the knobs: the next N simulated minutes without and with the
// pending change, per decode worker's share of new bindings, TTFT and E2E p90, evictions and failed
// requests, with a caption saying when the fork was taken and what it cost, or why a knob cannot act.
#include <QWidget>

class QLabel;
class QTableWidget;

namespace kvscope {

struct WhatIfResult;

class WhatIfTable : public QWidget {
  Q_OBJECT
 public:
  explicit WhatIfTable(QWidget* parent = nullptr);
  // null: nothing pending (the table hides). `note`: a line under the caption (e.g. why K cannot act).
  void setPreview(const WhatIfResult* result, const QString& note = {});
  void setComputing(const QString& what);  // "Previewing K=200..." while a fork runs
  QString text() const;  // the caption, the note and every cell, for tests

 private:
  QLabel* caption_;
  QLabel* note_;
  QTableWidget* table_;
};

}  // namespace kvscope
