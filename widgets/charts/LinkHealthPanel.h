#pragma once
// Panel 4: Mooncake link health, the P x D grid and each link's last failure reason. Past
// kGridMaxCells links the grid would be unreadable: the links are aggregated by P or by D instead
// (LinkAggregateModel), and a double-click on a group lists its links, with a back button.
#include "widgets/common/TelemetryPanel.h"

class QComboBox;
class QLabel;
class QPushButton;
class QStackedWidget;
class QTableView;

namespace kvscope {

class LinkAggregateModel;
class LinkHealthModel;

class LinkHealthPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  LinkHealthPanel(ViewState& view, QWidget* parent = nullptr);
  void refresh(const TelemetryStore& store) override;
  int refreshIntervalMs() const override { return 250; }  // tables of numbers: see TelemetryPanel
  static constexpr int kGridMaxCells = 64;                // e.g. 4 P x 16 D; more links are aggregated

  LinkHealthModel& model() { return *model_; }
  LinkAggregateModel& aggregate() { return *aggregate_; }
  bool aggregated() const { return aggregated_; }
  QTableView& aggregateTable() { return *aggregate_table_; }
  // Drill into a group ("P3"), or back to the groups ("").
  void drillInto(const QString& group);
  QString failureText() const;

 private:
  void fitGrid();

  LinkHealthModel* model_;
  LinkAggregateModel* aggregate_;
  QStackedWidget* stack_;
  QTableView* grid_;
  QWidget* aggregate_page_;
  QComboBox* group_by_;
  QPushButton* back_;
  QLabel* drilled_;
  QTableView* aggregate_table_;
  QLabel* failures_;
  bool aggregated_ = false;
  const TelemetryStore* last_store_ = nullptr;
};

}  // namespace kvscope
