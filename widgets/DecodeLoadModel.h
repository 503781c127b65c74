#pragma once
// One row per decode worker: bindings and their share, running and queued requests, resident
// sessions, pending seeds, KV use, and whether the worker is starving (the cold-D pattern: a
// worker that gets far less than its fair share of new bindings over the recent window). For a
// live cluster it also shows each worker's health as its source sees it (an unreachable /metrics),
// which is not in the event stream.
#include <QAbstractTableModel>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "model/Ids.h"

namespace kvscope {

class TelemetryStore;

class DecodeLoadModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Worker, State, Bindings, Share, RecentShare, Running, Queued, Sessions, PendingSeeds, KvUse, ColumnCount };
  // Starving: recent share below this fraction of the fair share (1 / decode workers), once the
  // window holds enough bindings to judge.
  static constexpr double kStarvingFraction = 0.25;
  static constexpr long kMinBindingsToJudge = 20;

  explicit DecodeLoadModel(QObject* parent = nullptr);
  void setWindow(SimTime window) { window_ = window; }

  void refresh(const TelemetryStore& store);
  bool starving(int row) const { return rows_[static_cast<std::size_t>(row)].starving; }
  // Per worker name: "ok", "unreachable: why", "degraded: why" or "" (SourceStatus::worker_health).
  // A worker that is not ok shows it in the state column, the reason in the tooltip.
  void setWorkerHealth(const std::map<std::string, std::string>& health);
  int rowOfWorker(const QString& name) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Row {
    QString name;
    int worker = 0;
    bool alive = true;
    long bindings = 0;
    double share = 0, recent_share = -1;
    int running = 0, queued = 0, sessions = 0, pending_seeds = 0;
    double kv_use = 0;
    bool starving = false;
  };
  struct Sample {
    SimTime time;
    std::vector<long> bindings;
  };
  std::vector<Row> rows_;
  std::map<std::string, std::string> health_;
  std::deque<Sample> history_;  // cumulative bindings at past refreshes, for the recent share
  SimTime window_ = secondsToTime(120);
};

}  // namespace kvscope
