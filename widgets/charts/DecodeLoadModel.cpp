#include "widgets/charts/DecodeLoadModel.h"

#include <QBrush>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

#include <algorithm>
#include <functional>

#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/PaletteTint.h"

namespace kvscope {

QColor workerStateColor(WorkerStateKind kind) {
  switch (kind) {
    case WorkerStateKind::Crashed:
      return QColor(0xd6, 0x27, 0x28);  // red
    case WorkerStateKind::Unreachable:
      return QColor(0x8c, 0x1a, 0x6b);  // plum
    case WorkerStateKind::Cold:
      return QColor(0x00, 0xa5, 0xa5);  // teal ("frozen"), not selection blue
    case WorkerStateKind::Degraded:
      return QColor(0xff, 0x7f, 0x0e);  // orange
    case WorkerStateKind::Restarted:
      return QColor(0xbc, 0xbd, 0x22);  // olive
    case WorkerStateKind::Evicting:
      return QColor(0xe3, 0x77, 0xc2);  // pink
    case WorkerStateKind::Quiet:
    case WorkerStateKind::Idle:
      return QColor(0x9a, 0x9a, 0x9a);  // grey
    case WorkerStateKind::Ok:
      return QColor(0x2c, 0xa0, 0x2c);  // green
  }
  return Qt::gray;
}

DecodeLoadModel::DecodeLoadModel(QObject* parent) : QAbstractTableModel(parent) {}

void DecodeLoadModel::setWindow(SimTime window) {
  WorkerStateTracker::Options options = tracker_.options();
  options.window = window;
  tracker_ = WorkerStateTracker(options);
}

void DecodeLoadModel::setWorstFirst(bool worst_first) { worst_first_ = worst_first; }

void DecodeLoadModel::refresh(const TelemetryStore& store) {
  std::vector<Row> rows;
  long total = 0;
  for (const WorkerState& s : tracker_.update(store, health_)) {
    const WorkerSeries& w = store.workers()[static_cast<std::size_t>(s.store_index)];
    Row r;
    r.name = QString::fromStdString(w.info.name);
    r.state = s;
    r.bindings = w.admitted;
    r.running = w.latest.running;
    r.queued = w.latest.queued;
    r.sessions = w.latest.resident_sessions;
    r.pending_seeds = w.latest.pending_seeds;
    r.kv_use = w.latest.kv_capacity > 0
                   ? static_cast<double>(w.latest.kv_used) / static_cast<double>(w.latest.kv_capacity)
                   : 0;
    r.kv_event_blocks = w.latest.kv_event_blocks;
    r.kv_used = w.latest.kv_used;
    r.kv_stores_per_s = w.kv_stores_per_s;
    r.kv_removals_per_s = w.kv_removals_per_s;
    if (!w.hits.empty()) r.prefix_hit = w.hits.rate();
    r.prefix_queried = w.hits.prompt();
    r.engine_counted = w.latest.prefix_queried_tokens > 0;
    total += w.admitted;
    rows.push_back(std::move(r));
  }
  for (Row& r : rows) r.share = total > 0 ? static_cast<double>(r.bindings) / static_cast<double>(total) : 0;
  // Past maxRows only the worst are listed (then always worst first, or the cut would be arbitrary).
  const bool cut = static_cast<int>(rows.size()) > max_rows_;
  if (frozen_ && !rows_.empty()) {
    // The pointer is on the strip: the listed workers keep their rows, so a click lands on the row
    // it aimed at; any other worker comes after them, worst first.
    std::map<QString, std::size_t> listed;
    for (std::size_t i = 0; i < rows_.size(); ++i) listed[rows_[i].name] = i;
    const auto rowOf = [&](const Row& r) {
      const auto it = listed.find(r.name);
      return it == listed.end() ? rows_.size() : it->second;
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
      const std::size_t ra = rowOf(a), rb = rowOf(b);
      return ra != rb ? ra < rb : severity(a.state.kind) > severity(b.state.kind);
    });
  } else if (worst_first_ || cut || static_cast<int>(rows.size()) > kWorstFirstAbove) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return severity(a.state.kind) > severity(b.state.kind); });
  }
  hidden_ = cut ? static_cast<int>(rows.size()) - max_rows_ : 0;
  hidden_by_state_.clear();
  if (cut) {
    std::map<int, std::pair<WorkerStateKind, int>, std::greater<>> by_severity;  // worst first
    for (std::size_t i = static_cast<std::size_t>(max_rows_); i < rows.size(); ++i) {
      auto& [kind, n] = by_severity[severity(rows[i].state.kind)];
      kind = rows[i].state.kind;
      ++n;
    }
    for (const auto& [severity_rank, counted] : by_severity) hidden_by_state_.push_back(counted);
    rows.resize(static_cast<std::size_t>(max_rows_));
  }
  worst_.clear();
  for (const Row& r : rows)
    if (severity(r.state.kind) > severity(WorkerStateKind::Quiet)) worst_ << r.name;

  const bool same_rows =
      rows.size() == rows_.size() &&
      std::equal(rows.begin(), rows.end(), rows_.begin(), [](const Row& a, const Row& b) { return a.name == b.name; });
  if (!same_rows) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
  } else {
    rows_ = std::move(rows);
    if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
  }
}

QString DecodeLoadModel::hiddenSummary() const {
  QStringList parts;
  for (const auto& [kind, n] : hidden_by_state_)
    parts << QStringLiteral("%1 %2").arg(n).arg(QString::fromLatin1(toString(kind)));
  return parts.join(QStringLiteral(", "));
}

void DecodeLoadModel::setSelectedWorkers(const QStringList& names) {
  selected_ = names;
  if (!rows_.empty())
    emit dataChanged(index(0, Worker), index(rowCount() - 1, Worker), {Qt::BackgroundRole, Qt::ToolTipRole});
}

void DecodeLoadModel::setHighlighted(std::function<bool(const QString&)> highlighted) {
  highlighted_ = std::move(highlighted);
  if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1), {Qt::FontRole});
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

namespace {
QString pct(double fraction) { return QString::number(fraction * 100, 'f', 1) + " %"; }
}  // namespace

// The text of a row's cell.
QVariant DecodeLoadModel::displayText(const Row& r, int column) {
  switch (column) {
    case Worker:
      return r.name;
    case State:
      return QString::fromStdString(r.state.cause);
    case Bindings:
      return QVariant::fromValue(static_cast<qlonglong>(r.bindings));
    case Share:
      return pct(r.share);
    case RecentShare:
      return r.state.recent_share < 0 ? QStringLiteral("-") : pct(r.state.recent_share);
    case Running:
      return r.running;
    case Queued:
      return r.queued;
    case Sessions:
      return r.sessions;
    case PendingSeeds:
      return r.pending_seeds;
    case KvUse:
      return pct(r.kv_use);
    case PrefixHit:
      return r.prefix_hit < 0 ? QStringLiteral("-") : pct(r.prefix_hit);
  }
  return {};
}

// What a cell's tooltip says beyond its text: a state's cause, a pool's blocks, the cache's hits.
QVariant DecodeLoadModel::toolTip(const Row& r, int column) {
  if (column == State && r.state.kind == WorkerStateKind::Cold)
    return QStringLiteral("%1: %2. The cold-D pattern: raise the load-floor bonus K or use exclusive-overlap.")
        .arg(r.name, QString::fromStdString(r.state.cause));
  if (column == State) return QString::fromStdString(r.state.cause);
  if (column == KvUse)
    return r.kv_event_blocks > 0 ? QStringLiteral(
                                       "%1: %2 tokens in use; its engine holds %3 cached blocks (from its KV events), "
                                       "storing %4 and removing %5 blocks/s")
                                       .arg(r.name)
                                       .arg(r.kv_used)
                                       .arg(r.kv_event_blocks)
                                       .arg(r.kv_stores_per_s, 0, 'f', 1)
                                       .arg(r.kv_removals_per_s, 0, 'f', 1)
                                 : QStringLiteral("%1: %2 tokens in use").arg(r.name).arg(r.kv_used);
  if (column == PrefixHit)
    return r.prefix_hit < 0
               ? QStringLiteral("%1: no prompt tokens looked up in its prefix cache in the last minute").arg(r.name)
               : QStringLiteral("%1: %2 of %3 prompt tokens served from its prefix cache in the last minute (%4)")
                     .arg(r.name, pct(r.prefix_hit))
                     .arg(r.prefix_queried)
                     .arg(r.engine_counted ? QStringLiteral("the engine's own counters")
                                           : QStringLiteral("finished requests"));
  return {};
}

QVariant DecodeLoadModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::DisplayRole) return displayText(r, index.column());
  if (role == Qt::UserRole) {  // raw numbers for sorting, tests and bars
    switch (index.column()) {
      case Share:
        return r.share;
      case RecentShare:
        return r.state.recent_share;
      case KvUse:
        return r.kv_use;
      case PrefixHit:
        return r.prefix_hit;
      case State:
        return QString::fromLatin1(toString(r.state.kind));
      default:
        return data(index, Qt::DisplayRole);
    }
  }
  // The state's colour as a swatch and a light tint of its cell only: a whole tinted row read as a
  // selection.
  if (role == Qt::DecorationRole && index.column() == State) return workerStateColor(r.state.kind);
  if (role == Qt::BackgroundRole && index.column() == State && r.state.kind != WorkerStateKind::Ok)
    return QBrush(mixHue(QGuiApplication::palette().color(QPalette::Base), workerStateColor(r.state.kind), 0.22));
  if (role == Qt::ToolTipRole && index.column() != Worker) return toolTip(r, index.column());
  const bool selected = index.column() == Worker && selected_.contains(r.name);
  if (role == Qt::BackgroundRole && selected) return QGuiApplication::palette().brush(QPalette::Highlight);
  if (role == Qt::ForegroundRole && selected) return QGuiApplication::palette().brush(QPalette::HighlightedText);
  if (role == Qt::ToolTipRole && index.column() == Worker)
    return selected ? QStringLiteral("%1: drawn as a line in the charts (click to drop it)").arg(r.name)
                    : QStringLiteral("Click to draw %1 as a line in the charts (Ctrl+click adds)").arg(r.name);
  if (role == Qt::FontRole && highlighted_ && highlighted_(r.name)) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role == Qt::TextAlignmentRole && index.column() >= Bindings)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant DecodeLoadModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"worker", "state",    "bindings",      "share",  "recent share", "running",
                                "queued", "sessions", "pending seeds", "KV use", "prefix hit"};
  return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant{};
}

}  // namespace kvscope
