#pragma once
// A sweep as a table: one row per grid point; for one focus metric the change against the baseline,
// the sign-flip test's p-value and its verdict with n and the smallest p n allows; then the main
// metrics as "mean [95% CI]" across seeds (log scale: never below zero).
// Rows exist from the start (the grid is known); cells fill in as runs finish. A Qt view over core's
// plain SweepData/SweepAnalysis: it is given data, it never fetches any.
#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <string>
#include <vector>

#include "core/sweep/SweepAnalysis.h"
#include "core/sweep/SweepData.h"

namespace kvscope {

class SweepTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Role {
    // The .kvrec of the run this cell stands for (empty while no run of the point is done): for a
    // metric cell, the seed whose value is the median across seeds (the typical run); else the first.
    RecordingRole = Qt::UserRole + 1,
    RecordingsRole,  // QStringList: every finished run's recording of the point, in seed order
    PointRole,       // int: the grid point's index
  };
  // The focus metric's change, p and verdict come right after the runs: the verdict is what a reader
  // looks for, and it stays in view however wide the metric columns' intervals make the table.
  enum Column { PointColumn, RunsColumn, ChangeColumn, PValueColumn, VerdictColumn, FirstMetricColumn };

  explicit SweepTableModel(QObject* parent = nullptr);

  // The sweep so far (runs may be missing) and the directory its recordings are named in.
  void setSweep(const SweepData& data, const QString& dir);
  // The metric the change, p-value and verdict columns are about (a SweepMetric key).
  void setFocusMetric(const std::string& key);
  const std::string& focusMetric() const { return focus_; }

  const SweepData& data() const { return data_; }
  const SweepAnalysis& analysis() const { return analysis_; }
  // The metrics shown as columns, in order (SweepMetric keys).
  static const std::vector<std::string>& mainMetrics();
  int changeColumn() const { return ChangeColumn; }
  int pValueColumn() const { return PValueColumn; }
  int verdictColumn() const { return VerdictColumn; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  const MetricCell* cell(int row, const std::string& key) const;
  const SweepMetric* metric(const std::string& key) const;
  QString display(int row, int column) const;
  QString tooltip(int row, int column) const;
  QString recordingFor(int row, int column) const;
  QString pathOf(std::size_t point, std::size_t seed) const;

  SweepData data_;
  SweepAnalysis analysis_;
  QString dir_;
  std::string focus_ = "e2e_mean_s";
};

}  // namespace kvscope
