#pragma once
// The what-if preview's numbers beside the knobs: the next N simulated minutes without and with the
// pending change, per decode worker's share of new bindings, TTFT and E2E p90, evictions and failed
// requests, with a caption saying when the fork was taken, how far the run has moved since, and what
// it cost, or why a knob cannot act. On a large cluster the shares list the workers the change moves
// most (kMovers) and sums the rest in one line, not a row per worker.
#include <QWidget>

#include "core/model/Ids.h"

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
  // The run's time now: the caption says how old the shown preview is.
  void setNow(SimTime now);
  QString text() const;  // the caption, the note and every cell, for tests

  static constexpr std::size_t kMovers = 6;

 private:
  void renderCaption();

  QString caption_text_;  // without the age
  SimTime from_ = -1;     // the shown preview's fork time (-1: none shown)
  SimTime now_ = -1;
  SimTime horizon_ = 0;  // how far it looks ahead
  QLabel* caption_;
  QLabel* note_;
  QTableWidget* table_;
};

}  // namespace kvscope
