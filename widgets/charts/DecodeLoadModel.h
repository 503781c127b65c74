#pragma once
// One row per decode worker: its state with the cause and since when (WorkerStateTracker: crashed,
// unreachable, cold, degraded, restarted, evicting, quiet, idle, ok), bindings and their share,
// running and queued requests, resident sessions, pending seeds and KV use. Rows in worker order,
// or worst first on demand; above maxRows() only the worst are listed and hiddenCount() says how
// many are not, by state (hiddenSummary(): "50 ok, 2 idle"). Past kWorstFirstAbove workers the
// rows are worst first whatever setWorstFirst says: in a 64-D cluster worker order hides the one
// that matters.
#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
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
  enum Column {
    Worker,
    State,
    Bindings,
    Share,
    RecentShare,
    Running,
    Queued,
    Sessions,
    PendingSeeds,
    KvUse,
    PrefixHit,
    ColumnCount
  };

  static constexpr int kWorstFirstAbove = 12;

  explicit DecodeLoadModel(QObject* parent = nullptr);
  void setWindow(SimTime window);
  void setWorstFirst(bool worst_first);
  // Frozen (the pointer is over the strip): refreshes keep the listed rows where they are.
  void setFrozen(bool frozen) { frozen_ = frozen; }
  bool frozen() const { return frozen_; }
  // The listed workers in a state worse than quiet (crashed ... evicting), in the strip's order:
  // the ones the charts draw as lines when the operator picked none.
  const QStringList& worstWorkers() const { return worst_; }
  bool worstFirst() const { return worst_first_; }
  void setMaxRows(int rows) { max_rows_ = rows; }
  int maxRows() const { return max_rows_; }
  int hiddenCount() const { return hidden_; }
  // The rows not listed, counted by state, worst first: {(Ok, 50), (Idle, 2)}.
  const std::vector<std::pair<WorkerStateKind, int>>& hiddenByState() const { return hidden_by_state_; }
  // "50 ok, 2 idle" (empty when nothing is hidden).
  QString hiddenSummary() const;
  // Workers picked by the operator (ViewState::selectedWorkers): their name cell is marked.
  void setSelectedWorkers(const QStringList& names);
  QString workerAt(int row) const { return rows_[static_cast<std::size_t>(row)].name; }

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
    std::int64_t kv_used = 0, kv_event_blocks = 0;      // tokens; blocks per the engine's KV events (0: no feed)
    double kv_stores_per_s = 0, kv_removals_per_s = 0;  // the engine's block churn, per its KV events
    double prefix_hit = -1;           // prompt tokens served from the prefix cache over the last minute; -1: none asked
    std::int64_t prefix_queried = 0;  // those tokens' count
    bool engine_counted = false;      // live: the engine's own counters (else the requests' cached tokens)
  };
  static QVariant displayText(const Row& r, int column);
  static QVariant toolTip(const Row& r, int column);
  std::vector<Row> rows_;
  std::map<std::string, std::string> health_;
  WorkerStateTracker tracker_;
  bool worst_first_ = false;
  bool frozen_ = false;
  QStringList worst_;
  int max_rows_ = 16;
  int hidden_ = 0;
  std::vector<std::pair<WorkerStateKind, int>> hidden_by_state_;
  QStringList selected_;
  std::function<bool(const QString&)> highlighted_;
};

}  // namespace kvscope
