#pragma once
// One route decision as a table, the answer to "why did this go to D1?": a row per candidate in the
// policy's rank order (best first) with its total score, eligibility and each named score component
// as a column; the chosen worker's row is marked. The model keeps its own copy of the decision, so
// it stays readable after the store's decision ring drops it.
#include <QAbstractTableModel>
#include <QStringList>

#include <optional>
#include <vector>

#include "core/events/Event.h"

namespace kvscope {

class DecisionModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Rank, Worker, Score, Eligible, FirstComponent };
  static constexpr int SortRole = Qt::UserRole;       // the number behind a cell
  static constexpr int ComponentRole = Qt::UserRole;  // headerData: a component's name as the policy wrote it

  explicit DecisionModel(QObject* parent = nullptr);

  void setDecision(const RouteDecision& decision);
  void clear();
  void setWorkerNames(std::vector<QString> names);

  const std::optional<RouteDecision>& decision() const { return decision_; }
  // The component columns, in the order the policy added them ("overlap", "floor_bonus", ...).
  const QStringList& componentNames() const { return components_; }
  int chosenRow() const;  // -1 when nothing was chosen

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::optional<RouteDecision> decision_;
  QStringList components_;
  std::vector<std::vector<double>> values_;  // [candidate][component column]
  std::vector<QString> worker_names_;
};

// Which way the scores point, and why the chosen worker won when the total score alone does not say
// (a tie and its tie-break, an affinity gate, a sampled pick). One sentence per line.
QString explainDecision(const RouteDecision& decision, const std::vector<QString>& worker_names);

// A score or component value, with as many decimals as its size needs; "—" for an absent one.
QString formatScore(double value);

}  // namespace kvscope
