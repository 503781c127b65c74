#pragma once
// The diagnosis engine's findings as a table: mode, name, time window, evidence, suggested knob.
// Given finished lists by the diagnosis panel; a list that only grew or only changed its numbers
// keeps the rows (and the user's selection) instead of resetting.
#include <QAbstractTableModel>

#include <vector>

#include "diagnosis/Finding.h"

namespace kvscope {

class FindingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Mode, Name, Window, Evidence, Suggestion, ColumnCount };
  enum Role {
    WindowStartRole = Qt::UserRole + 1,  // seconds, double
    WindowEndRole,
  };

  using QAbstractTableModel::QAbstractTableModel;

  void setFindings(std::vector<Finding> findings);
  const std::vector<Finding>& findings() const { return findings_; }
  const Finding* finding(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  static QString windowText(const Finding& f);

 private:
  std::vector<Finding> findings_;
};

}  // namespace kvscope
