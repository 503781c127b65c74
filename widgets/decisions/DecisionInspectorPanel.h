#pragma once
// Panel 8 of the console, "why did this go to D1?": the recently finished requests, and
// for the selected one (picked here or anywhere else through ViewState) the route decision that
// placed it: its policy, the chosen worker, and every candidate's score components.
#include <vector>

#include "core/model/Ids.h"
#include "widgets/common/TelemetryPanel.h"

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace kvscope {

class DecisionModel;
class RequestTableModel;
class RequestSpanView;

class DecisionInspectorPanel : public TelemetryPanel {
  Q_OBJECT
 public:
  explicit DecisionInspectorPanel(ViewState& view, QWidget* parent = nullptr);
  ~DecisionInspectorPanel() override;

  // Keeps `store` for answering a selection made between frames: the main window owns the store
  // and outlives its panels.
  void refresh(const TelemetryStore& store) override;

  const RequestTableModel& requests() const { return *requests_; }
  const DecisionModel& decision() const { return *decision_; }

 private:
  void onRequestRowChanged(const QModelIndex& current);
  void onRequestSelected(RequestId request);
  void showDecision();
  void showSpans();
  void selectRowOf(RequestId request);

  const TelemetryStore* store_ = nullptr;
  std::vector<QString> worker_names_;
  RequestSpanView* spans_ = nullptr;
  RequestId shown_ = 0;                // the request the decision view shows
  bool waiting_for_decision_ = false;  // selected before its decision reached the store
  bool syncing_selection_ = false;

  RequestTableModel* requests_ = nullptr;
  QSortFilterProxyModel* sorted_requests_ = nullptr;
  DecisionModel* decision_ = nullptr;
  QTableView* request_table_ = nullptr;
  QTableView* decision_table_ = nullptr;
  QLabel* summary_ = nullptr;      // request, policy, chosen worker, where it ended up
  QLabel* explanation_ = nullptr;  // which way scores point, ties and overrides
};

}  // namespace kvscope
