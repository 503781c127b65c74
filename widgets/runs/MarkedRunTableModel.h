#pragma once
// A live sweep's runs as a table: one row per marked run, completed ones with
// their summary and the open one as running (elapsed time and requests so far). Columns: #, name,
// one per parameter name any run gave (first-seen order), then the summary's main metrics and the
// diagnosis. With a baseline run chosen, each metric cell carries its change against that run
// (ChangeRole, the tooltip) and is tinted better/worse from the palette's own base colour. Rows
// are kept by run index, so a run seen again (a replay sought back) replaces its row.
#include <QAbstractTableModel>
#include <QString>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/run/MarkedRunSplitter.h"

namespace kvscope {

// What is known of the open run while it goes (its summary comes when it ends).
struct OpenRunProgress {
  double elapsed_s = 0;
  long requests = 0;
  long failed = 0;
  bool operator==(const OpenRunProgress&) const = default;
};

class MarkedRunTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Role {
    SortRole = Qt::UserRole + 1,  // numbers as numbers, so a proxy sorts 10 after 9
    RunIndexRole,                 // the run's index (from 1), for any cell
    ChangeRole,                   // double: % change against the baseline run; invalid when none
    RunningRole,                  // bool: the open run's row
  };
  enum Metric {
    Duration,
    Requests,
    FailedPct,
    TtftP50,
    TtftP99,
    E2eP50,
    E2eP99,
    Evictions,
    Reseeds,
    Diagnosis,
    MetricCount
  };
  enum FixedColumn { IndexColumn, NameColumn, FirstParameterColumn };

  explicit MarkedRunTableModel(QObject* parent = nullptr);

  // A run began: its row shows it as running.
  void openRun(const RunMarked& start);
  void setProgress(const OpenRunProgress& progress);
  // A run ended (its row becomes a completed one).
  void addRun(const MarkedRun& run);
  void clear();

  // The run the others are compared against (by run index), or none.
  void setBaseline(std::optional<std::uint32_t> run_index);
  std::optional<std::uint32_t> baseline() const { return baseline_; }

  int completedCount() const;
  // The open run's marker, if a run is open.
  const RunMarked* openStart() const;
  // The completed run on `row`, or nullptr (the open run, out of range).
  const MarkedRun* completedRun(int row) const;
  int rowOfRun(std::uint32_t run_index) const;
  int columnOf(Metric metric) const { return FirstParameterColumn + parameterCount() + metric; }
  int parameterCount() const { return static_cast<int>(parameters_.size()); }
  // The column of a parameter name, or -1.
  int parameterColumn(const std::string& name) const;

  // The metric's value for a summary (the cells, the comparison and the sort all read it).
  static std::optional<double> value(const MarkedRun& run, Metric metric);
  // A metric's value as its cells show it ("0.350 s", "20.0%"), for status lines that quote one.
  static QString formatValue(Metric metric, double value);
  // "3 'k400'": how the table, the status line and the summary dialog name a run.
  static QString runLabel(const RunMarked& start);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    RunMarked start;
    std::optional<MarkedRun> done;  // none while the run is open
    OpenRunProgress progress;
  };

  void addParameters(const RunMarked& start);
  int placeRow(const RunMarked& start);  // the row of start.index, inserted in index order when new
  const MarkedRun* baselineRun() const;
  std::optional<double> change(const Row& row, Metric metric) const;
  // Better (true) or worse than the baseline, for the metrics where lower is better; none when
  // the change is within noise or means neither.
  std::optional<bool> better(const Row& row, Metric metric) const;
  QVariant metricData(const Row& row, Metric metric, int role) const;
  QString parameterValue(const Row& row, int parameter) const;
  QString tooltip(const Row& row, int column) const;

  std::vector<Row> rows_;                // in run index order
  std::vector<std::string> parameters_;  // every parameter name seen, first-seen order
  std::optional<std::uint32_t> baseline_;
};

}  // namespace kvscope
