#pragma once
// Panel 1: every decode worker in view with its state and cause (the cold D among them). The table
// is as tall as its rows, up to DecodeLoadModel::maxRows(); beyond that the worst are listed with
// a count of the rest by state ("and 52 more: 50 ok, 2 idle"). "Worst first" sorts by state on
// demand (always past DecodeLoadModel::kWorstFirstAbove workers). A click on a row selects its
// worker for the charts (ViewState::selectWorkers).
#include "widgets/common/TelemetryPanel.h"

class QCheckBox;
class QLabel;
class QTableView;

namespace kvscope {

class DecodeLoadModel;

class DecodeLoadPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  DecodeLoadPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  int refreshIntervalMs() const override { return 250; }  // tables of numbers: see TelemetryPanel
  DecodeLoadModel& model() { return *model_; }
  QTableView& table() { return *table_; }
  void setWorstFirst(bool worst_first);
  // With many workers, list at most `rows` (3 to 8) of them; true when that changed (the rows
  // follow at the next refresh). rowsFittingIn: how many fit in a strip `height` pixels tall.
  bool setManyWorkerRows(int rows);
  int rowsFittingIn(int height) const;
  // The rows the table is sized to show (at least three; more as workers appear, up to the cut).
  int fittedRows() const { return fitted_rows_; }
  // The table's width with every column in view and the cause column at its widest: a panel
  // beside the strip may take only what is left of the window (PanelDocks::applyDefaultLayout).
  int widestTableWidth() const;

 signals:
  void rowsFitted(int rows);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fitRows();
  int chromeHeight() const;  // the table's header and frame: its height besides the rows

  DecodeLoadModel* model_;
  QTableView* table_;
  QCheckBox* worst_first_;
  QLabel* hidden_;
  int fitted_rows_ = -1;
  bool fitted_sideways_ = false;  // the table scrolls sideways (the window is narrower than its columns)
};

}  // namespace kvscope
