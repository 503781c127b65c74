#pragma once
// The Mooncake links of a large cluster, where a P x D grid (16 x 64 cells) is unreadable: one row
// per prefill worker (its links to every D) or per decode worker (its links from every P), each
// with how many links are alive, suspect or dead, the failed transfers and the newest failure
// reason; worst first. drillInto("P3") lists that worker's links one per row instead, worst first.
#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace kvscope {

class TelemetryStore;
struct LinkSeries;

class LinkAggregateModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum class GroupBy { Prefill, Decode };
  enum Column { Name, Links, Alive, Suspect, Dead, Failures, LastFailure, ColumnCount };

  explicit LinkAggregateModel(QObject* parent = nullptr);
  void setGroupBy(GroupBy by);
  GroupBy groupBy() const { return group_by_; }
  // Drill into a group ("P3" or "D12"): one row per link. An empty name goes back to the groups.
  void drillInto(const QString& group);
  const QString& drilled() const { return drilled_; }
  void refresh(const TelemetryStore& store);
  // The group (or link) name of a row.
  QString nameAt(int row) const { return rows_[static_cast<std::size_t>(row)].name; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Row {
    QString name;
    int links = 0, alive = 0, suspect = 0, dead = 0;
    long failures = 0;
    QString last_failure;
    double last_failure_s = -1;
    int worst = 0;  // LinkState of the worst link, for the colour and the order
  };
  void rebuild(const TelemetryStore& store);

  GroupBy group_by_ = GroupBy::Prefill;
  QString drilled_;
  std::vector<Row> rows_;
};

}  // namespace kvscope
