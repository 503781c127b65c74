#pragma once
// The diagnosis engine's findings as a table: mode, name, time window, evidence, suggested knob.
// Given finished lists by the diagnosis panel; a list that only grew or only changed its numbers
// keeps the rows (and the user's selection) instead of resetting.
#include <QAbstractTableModel>

#include <vector>

#include "core/diagnosis/Finding.h"

namespace kvscope {

class FindingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Mode, Name, Window, Evidence, Suggestion, ColumnCount };
  enum Role {
    WindowStartRole = Qt::UserRole + 1,  // seconds, double
    WindowEndRole,
    ModeRole,  // the bare mode ("B"); the Mode column shows it with its workers ("B - D2")
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
  static QString modeText(const Finding& f, std::size_t named = 3);  // "B - D2", "A - P0->D1, P0->D2"
  // How many subjects the Mode column names before "and N more" (1 to 3; the tooltip names all):
  // a narrow dock names fewer, so that the failure mode keeps room (DiagnosisPanel::fitColumns).
  void setNamedSubjects(int named);
  int namedSubjects() const { return static_cast<int>(named_); }

 private:
  std::vector<Finding> findings_;
  std::size_t named_ = 3;
};

}  // namespace kvscope
