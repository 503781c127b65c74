#include "widgets/charts/LinkHealthModel.h"

#include <QGuiApplication>
#include <QPalette>

#include <QBrush>
#include <QColor>

#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

namespace {
QColor stateColor(LinkState s) {
  switch (s) {
    case LinkState::Alive:
      return QColor(0x2c, 0xa0, 0x2c, 60);
    case LinkState::Suspect:
      return QColor(0xff, 0x7f, 0x0e, 110);
    case LinkState::Dead:
      return QColor(0xd6, 0x27, 0x28, 140);
  }
  return {};
}
}  // namespace

LinkHealthModel::LinkHealthModel(QObject* parent) : QAbstractTableModel(parent) {}

void LinkHealthModel::refresh(const TelemetryStore& store) {
  QStringList prefill, decode;
  std::vector<int> decode_workers;
  if (store.run())
    for (const WorkerInfo& p : store.run()->prefill) prefill << QString::fromStdString(p.name);
  for (std::size_t i = 0; i < store.workers().size(); ++i) {
    if (store.workers()[i].info.role != WorkerRole::Decode) continue;
    decode << QString::fromStdString(store.workers()[i].info.name);
    decode_workers.push_back(static_cast<int>(i));
  }
  const bool shape_changed = prefill != prefill_ || decode != decode_;
  if (shape_changed) beginResetModel();
  prefill_ = prefill;
  decode_ = decode;
  decode_workers_ = decode_workers;
  store_ = &store;
  if (shape_changed) {
    endResetModel();
  } else if (!prefill_.isEmpty() && !decode_workers_.empty()) {
    emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
  }
}

const LinkSeries* LinkHealthModel::linkAt(const QModelIndex& index) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return nullptr;
  // Looked up now, not kept from the refresh: a new source clears the store (and links added later
  // move the store's vector) before the next refresh, while a paint may come in between.
  return store_ ? store_->link(index.row(), decode_workers_[static_cast<std::size_t>(index.column())]) : nullptr;
}

int LinkHealthModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(prefill_.size());
}

int LinkHealthModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(decode_.size());
}

QString LinkHealthModel::unreachableReason(const QModelIndex& index) const {
  if (!index.isValid()) return {};
  for (const QString& end : {prefill_.value(index.row()), decode_.value(index.column())}) {
    const auto it = health_.find(end.toStdString());
    if (it != health_.end() && it->second.rfind("unreachable", 0) == 0)
      return end + QStringLiteral(" ") + QString::fromStdString(it->second);
  }
  return {};
}

QVariant LinkHealthModel::data(const QModelIndex& index, int role) const {
  const LinkSeries* link = linkAt(index);
  if (!link) return role == Qt::DisplayRole && index.isValid() ? QVariant(QStringLiteral("-")) : QVariant();
  const LinkGauges& g = link->latest;
  if (const QString why = unreachableReason(index); !why.isEmpty()) {
    switch (role) {
      case Qt::DisplayRole:
        return QStringLiteral("unknown\n(worker unreachable)");
      case Qt::ForegroundRole:
        return QBrush(QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text));
      case Qt::BackgroundRole:
        return QBrush(QGuiApplication::palette().color(QPalette::Disabled, QPalette::Window));
      case Qt::ToolTipRole:
        return QStringLiteral("%1: state unknown, %2").arg(QString::fromStdString(link->name), why);
      case Qt::UserRole:
        return -1;
      case Qt::TextAlignmentRole:
        return QVariant::fromValue(Qt::AlignCenter);
      default:
        return {};
    }
  }
  switch (role) {
    case Qt::DisplayRole:
      return QStringLiteral("%1\nqueue %2\n%3 MB in flight")
          .arg(QString::fromLatin1(toString(g.state)))
          .arg(g.queue_depth)
          .arg(static_cast<double>(g.bytes_in_flight) / 1e6, 0, 'f', 1);
    case Qt::BackgroundRole:
      return QBrush(stateColor(g.state));
    case Qt::ToolTipRole:
      if (link->last_failure.empty())
        return QStringLiteral("%1: no failure so far").arg(QString::fromStdString(link->name));
      return QStringLiteral("%1: %2 failed transfers; last failure at %3 s: %4")
          .arg(QString::fromStdString(link->name))
          .arg(link->failures)
          .arg(timeToSeconds(link->last_failure_time), 0, 'f', 1)
          .arg(QString::fromStdString(link->last_failure));
    case Qt::UserRole:
      return static_cast<int>(g.state);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::AlignCenter);
    default:
      return {};
  }
}

QVariant LinkHealthModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  const QStringList& names = orientation == Qt::Horizontal ? decode_ : prefill_;
  return section >= 0 && section < names.size() ? QVariant(names[section]) : QVariant();
}

}  // namespace kvscope
