#include "widgets/charts/LinkAggregateModel.h"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <map>

#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

namespace {
QColor worstColor(int state) {
  switch (static_cast<LinkState>(state)) {
    case LinkState::Alive:
      return QColor(0x2c, 0xa0, 0x2c, 60);
    case LinkState::Suspect:
      return QColor(0xff, 0x7f, 0x0e, 110);
    case LinkState::Dead:
      return QColor(0xd6, 0x27, 0x28, 140);
  }
  return {};
}

int rank(LinkState s) { return s == LinkState::Dead ? 2 : s == LinkState::Suspect ? 1 : 0; }
}  // namespace

LinkAggregateModel::LinkAggregateModel(QObject* parent) : QAbstractTableModel(parent) {}

void LinkAggregateModel::setGroupBy(GroupBy by) {
  if (by == group_by_ && drilled_.isEmpty()) return;
  beginResetModel();
  group_by_ = by;
  drilled_.clear();
  rows_.clear();
  endResetModel();
}

void LinkAggregateModel::drillInto(const QString& group) {
  beginResetModel();
  drilled_ = group;
  rows_.clear();
  endResetModel();
}

void LinkAggregateModel::refresh(const TelemetryStore& store) {
  const std::size_t before = rows_.size();
  std::vector<QString> names_before;
  for (const Row& r : rows_) names_before.push_back(r.name);
  rebuild(store);
  bool same = rows_.size() == before;
  for (std::size_t i = 0; same && i < rows_.size(); ++i) same = rows_[i].name == names_before[i];
  if (!same) {
    beginResetModel();
    endResetModel();
  } else if (!rows_.empty()) {
    emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
  }
}

void LinkAggregateModel::rebuild(const TelemetryStore& store) {
  auto decodeName = [&](WorkerId w) {
    return w >= 0 && static_cast<std::size_t>(w) < store.workers().size()
               ? QString::fromStdString(store.workers()[static_cast<std::size_t>(w)].info.name)
               : QStringLiteral("D?");
  };
  auto prefillName = [&](int p) {
    return store.run() && p >= 0 && static_cast<std::size_t>(p) < store.run()->prefill.size()
               ? QString::fromStdString(store.run()->prefill[static_cast<std::size_t>(p)].name)
               : QStringLiteral("P%1").arg(p);
  };
  std::vector<Row> rows;
  std::map<QString, std::size_t> at;  // group name -> row
  for (const LinkSeries& l : store.links()) {
    const QString p = prefillName(l.prefill), d = decodeName(l.worker);
    QString key;
    if (drilled_.isEmpty())
      key = group_by_ == GroupBy::Prefill ? p : d;
    else if (drilled_ == p || drilled_ == d)
      key = QString::fromStdString(l.name);
    else
      continue;
    auto [it, added] = at.try_emplace(key, rows.size());
    if (added) {
      rows.emplace_back();
      rows.back().name = key;
    }
    Row& r = rows[it->second];
    ++r.links;
    switch (l.latest.state) {
      case LinkState::Alive:
        ++r.alive;
        break;
      case LinkState::Suspect:
        ++r.suspect;
        break;
      case LinkState::Dead:
        ++r.dead;
        break;
    }
    r.worst = std::max(r.worst, rank(l.latest.state));
    r.failures += l.failures;
    if (l.last_failure_time >= 0 && timeToSeconds(l.last_failure_time) > r.last_failure_s) {
      r.last_failure_s = timeToSeconds(l.last_failure_time);
      r.last_failure = QString::fromStdString(l.last_failure);
    }
  }
  // Worst first: dead, then suspect, then the most failed transfers; ties keep worker order.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.worst != b.worst) return a.worst > b.worst;
    if (a.dead != b.dead) return a.dead > b.dead;
    if (a.suspect != b.suspect) return a.suspect > b.suspect;
    return a.failures > b.failures;
  });
  rows_ = std::move(rows);
}

int LinkAggregateModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int LinkAggregateModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LinkAggregateModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::DisplayRole || role == Qt::UserRole) {
    switch (index.column()) {
      case Name:
        return r.name;
      case Links:
        return r.links;
      case Alive:
        return r.alive;
      case Suspect:
        return r.suspect;
      case Dead:
        return r.dead;
      case Failures:
        return QVariant::fromValue(static_cast<qlonglong>(r.failures));
      case LastFailure:
        if (r.last_failure_s < 0) return role == Qt::UserRole ? QVariant(QString()) : QVariant(QStringLiteral("-"));
        return QStringLiteral("%1 s: %2").arg(r.last_failure_s, 0, 'f', 1).arg(r.last_failure);
    }
  }
  if (role == Qt::BackgroundRole && index.column() == Name) return QBrush(worstColor(r.worst == 2 ? 2 : r.worst));
  if (role == Qt::ToolTipRole && index.column() == LastFailure) return r.last_failure;
  if (role == Qt::ToolTipRole && index.column() == Name && drilled_.isEmpty())
    return tr("Double-click: %1's links one by one").arg(r.name);
  if (role == Qt::TextAlignmentRole && index.column() >= Links && index.column() <= Failures)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant LinkAggregateModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  const QString first = !drilled_.isEmpty() ? tr("link") : group_by_ == GroupBy::Prefill ? tr("prefill") : tr("decode");
  switch (section) {
    case Name:
      return first;
    case Links:
      return tr("links");
    case Alive:
      return tr("alive");
    case Suspect:
      return tr("suspect");
    case Dead:
      return tr("dead");
    case Failures:
      return tr("failed transfers");
    case LastFailure:
      return tr("last failure");
  }
  return {};
}

}  // namespace kvscope
