#pragma once
// One row per decode worker: its state with the cause and since when (WorkerStateTracker: crashed,
// unreachable, cold, degraded, restarted, evicting, quiet, idle, ok), bindings and their share,
// running and queued requests, resident sessions, pending seeds and KV use. Rows in worker order,
// or worst first on demand; above maxRows() only the worst are listed and hiddenCount() says how
// many are not.
#include <QAbstractTableModel>
#include <QColor>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model/Ids.h"
#include "core/telemetry/WorkerStateTracker.h"

namespace kvscope {

class TelemetryStore;

// The state's mark, distinct from each other and from the selection colour in light and dark.
QColor workerStateColor(WorkerStateKind kind);

class DecodeLoadModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Worker, State, Bindings, Share, RecentShare, Running, Queued, Sessions, PendingSeeds, KvUse, ColumnCount };

  explicit DecodeLoadModel(QObject* parent = nullptr);
  void setWindow(SimTime window);
  void setWorstFirst(bool worst_first);
  bool worstFirst() const { return worst_first_; }
  void setMaxRows(int rows) { max_rows_ = rows; }
  int maxRows() const { return max_rows_; }
  int hiddenCount() const { return hidden_; }

  void refresh(const TelemetryStore& store);
  const WorkerState& state(int row) const { return rows_[static_cast<std::size_t>(row)].state; }
  bool starving(int row) const { return state(row).kind == WorkerStateKind::Cold; }
  // Per worker name: "ok", "unreachable: why", "degraded: why" or "" (SourceStatus::worker_health).
  void setWorkerHealth(const std::map<std::string, std::string>& health) { health_ = health; }
  int rowOfWorker(const QString& name) const;
  // Rows of these workers are bold (a selected finding's).
  void setHighlighted(std::function<bool(const QString&)> highlighted);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Row {
    QString name;
    WorkerState state;
    long bindings = 0;
    double share = 0;
    int running = 0, queued = 0, sessions = 0, pending_seeds = 0;
    double kv_use = 0;
  };
  std::vector<Row> rows_;
  std::map<std::string, std::string> health_;
  WorkerStateTracker tracker_;
  bool worst_first_ = false;
  int max_rows_ = 16;
  int hidden_ = 0;
  std::function<bool(const QString&)> highlighted_;
};

}  // namespace kvscope
