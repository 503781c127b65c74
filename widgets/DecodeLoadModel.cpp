#include "DecodeLoadModel.h"

#include <QBrush>
#include <QColor>

#include "telemetry/TelemetryStore.h"

namespace kvscope {

DecodeLoadModel::DecodeLoadModel(QObject* parent) : QAbstractTableModel(parent) {}

void DecodeLoadModel::refresh(const TelemetryStore& store) {
  std::vector<Row> rows;
  std::vector<long> bindings;
  const auto& workers = store.workers();
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const WorkerSeries& w = workers[i];
    if (w.info.role == WorkerRole::Prefill) continue;
    Row r;
    r.name = QString::fromStdString(w.info.name);
    r.worker = static_cast<int>(i);
    r.alive = w.alive;
    r.bindings = w.admitted;
    r.running = w.latest.running;
    r.queued = w.latest.queued;
    r.sessions = w.latest.resident_sessions;
    r.pending_seeds = w.latest.pending_seeds;
    r.kv_use = w.latest.kv_capacity > 0 ? static_cast<double>(w.latest.kv_used) / static_cast<double>(w.latest.kv_capacity) : 0;
    rows.push_back(r);
    bindings.push_back(w.admitted);
  }
  long total = 0;
  for (long b : bindings) total += b;
  for (Row& r : rows) r.share = total > 0 ? static_cast<double>(r.bindings) / static_cast<double>(total) : 0;

  // Recent share: bindings since the oldest kept refresh inside the window.
  if (!history_.empty() && (history_.back().time > store.now() || history_.back().bindings.size() != bindings.size()))
    history_.clear();  // a new run or a seek backwards
  history_.push_back({store.now(), bindings});
  while (history_.size() > 2 && history_[1].time <= store.now() - window_) history_.pop_front();
  const Sample& base = history_.front();
  long recent_total = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) recent_total += bindings[i] - base.bindings[i];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (recent_total < kMinBindingsToJudge) continue;
    rows[i].recent_share = static_cast<double>(bindings[i] - base.bindings[i]) / static_cast<double>(recent_total);
    const double fair = 1.0 / static_cast<double>(rows.size());
    rows[i].starving = rows[i].alive && rows.size() > 1 && rows[i].recent_share < kStarvingFraction * fair;
  }

  if (rows.size() != rows_.size()) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
  } else {
    rows_ = std::move(rows);
    if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
  }
}

void DecodeLoadModel::setWorkerHealth(const std::map<std::string, std::string>& health) {
  if (health == health_) return;
  health_ = health;
  if (!rows_.empty()) emit dataChanged(index(0, State), index(rowCount() - 1, State));
}

int DecodeLoadModel::rowOfWorker(const QString& name) const {
  for (std::size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].name == name) return static_cast<int>(i);
  return -1;
}

int DecodeLoadModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int DecodeLoadModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant DecodeLoadModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  auto pct = [](double v) { return QString::number(v * 100, 'f', 1) + " %"; };
  // "unreachable: connection refused" -> "unreachable"; empty when healthy or not known.
  const auto h = health_.find(r.name.toStdString());
  const QString health = h == health_.end() || h->second.empty() || h->second == "ok" ? QString() : QString::fromStdString(h->second);
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Worker: return r.name;
      case State:
        return !r.alive              ? QStringLiteral("crashed")
               : !health.isEmpty()   ? health.section(':', 0, 0)
               : r.starving          ? QStringLiteral("starving (cold)")
                                     : QStringLiteral("ok");
      case Bindings: return QVariant::fromValue(static_cast<qlonglong>(r.bindings));
      case Share: return pct(r.share);
      case RecentShare: return r.recent_share < 0 ? QStringLiteral("-") : pct(r.recent_share);
      case Running: return r.running;
      case Queued: return r.queued;
      case Sessions: return r.sessions;
      case PendingSeeds: return r.pending_seeds;
      case KvUse: return pct(r.kv_use);
    }
  }
  if (role == Qt::UserRole) {  // raw numbers for sorting, tests and bars
    switch (index.column()) {
      case Share: return r.share;
      case RecentShare: return r.recent_share;
      case KvUse: return r.kv_use;
      case State: return r.starving;
      default: return data(index, Qt::DisplayRole);
    }
  }
  if (role == Qt::BackgroundRole && (r.starving || !r.alive))
    return QBrush(r.alive ? QColor(0x1f, 0x77, 0xb4, 70) : QColor(0xd6, 0x27, 0x28, 70));
  if (role == Qt::BackgroundRole && !health.isEmpty() && index.column() == State) return QBrush(QColor(0xff, 0x7f, 0x0e, 70));
  if (role == Qt::ToolTipRole && !health.isEmpty()) return QStringLiteral("%1 /metrics: %2").arg(r.name, health);
  if (role == Qt::ToolTipRole && r.starving)
    return QStringLiteral("%1 received %2 of new bindings in the last %3 s (fair share %4): the cold-D pattern. "
                          "Raise the load-floor bonus K or use exclusive-overlap.")
        .arg(r.name, pct(r.recent_share))
        .arg(timeToSeconds(window_), 0, 'f', 0)
        .arg(pct(1.0 / static_cast<double>(rows_.size())));
  if (role == Qt::TextAlignmentRole && index.column() >= Bindings)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant DecodeLoadModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"worker", "state", "bindings", "share", "recent share", "running",
                                "queued", "sessions", "pending seeds", "KV use"};
  return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant{};
}

}  // namespace kvscope
