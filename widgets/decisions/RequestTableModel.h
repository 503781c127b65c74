#pragma once
// The decision inspector's table of recently finished requests: a mirror of the telemetry store's
// bounded ring of RequestDone. Each frame's sync() removes the rows the ring dropped at its front and
// appends the new ones at its back (beginRemoveRows/beginInsertRows), so selections and scroll
// positions survive; it resets only when the ring no longer overlaps what is shown (a new run, or
// more requests in one frame than the ring holds).
#include <QAbstractTableModel>

#include <deque>
#include <optional>
#include <vector>

#include "core/events/Event.h"

namespace kvscope {

// A worker's name as the run announced it ("D1"); "#3" for an index the run did not name.
QString workerLabel(const std::vector<QString>& names, WorkerId worker);
// A failure read from a log line that names no request (request id 0), said as such with its error.
QString unnamedFailureText(const RequestDone& done);

class RequestTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Request, Session, Turn, Worker, Path, Status, Ttft, E2e, ColumnCount };
  // Numbers (and names) to sort by; DisplayRole holds formatted text.
  static constexpr int SortRole = Qt::UserRole;
  static constexpr int RequestIdRole = Qt::UserRole + 1;

  explicit RequestTableModel(QObject* parent = nullptr);

  // `ring` and `times` are TelemetryStore::requests() and requestTimes() (same length, time order).
  struct SyncResult {
    int removed = 0;   // rows dropped at the front
    int inserted = 0;  // rows appended at the back
    bool reset = false;
  };
  SyncResult sync(const std::deque<RequestDone>& ring, const std::deque<SimTime>& times);
  void setWorkerNames(std::vector<QString> names);

  const RequestDone& requestAt(int row) const { return rows_[static_cast<std::size_t>(row)].done; }
  SimTime finishedAt(int row) const { return rows_[static_cast<std::size_t>(row)].finished; }
  std::optional<int> rowOf(RequestId request) const;  // the newest row of that request

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    RequestDone done;
    SimTime finished = 0;  // the ring's time, told apart from a later request reusing the id
  };
  void resetTo(const std::deque<RequestDone>& ring, const std::deque<SimTime>& times);

  std::deque<Row> rows_;
  std::vector<QString> worker_names_;
};

}  // namespace kvscope
