#include "widgets/decisions/RequestTableModel.h"

#include <QColor>

namespace kvscope {

namespace {

const QColor kFailedText(200, 60, 60);

QString seconds(SimTime t) { return QString::number(timeToSeconds(t), 'f', 3); }

}  // namespace

QString workerLabel(const std::vector<QString>& names, WorkerId worker) {
  if (worker == kNoWorker) return QStringLiteral("—");
  if (worker >= 0 && static_cast<std::size_t>(worker) < names.size() &&
      !names[static_cast<std::size_t>(worker)].isEmpty())
    return names[static_cast<std::size_t>(worker)];
  return QStringLiteral("#%1").arg(worker);
}

QString unnamedFailureText(const RequestDone& done) {
  return RequestTableModel::tr(
             "A failure read from a log line that names no request, so there is no route decision "
             "to show: %1")
      .arg(done.error.empty() ? RequestTableModel::tr("no error text") : QString::fromStdString(done.error));
}

RequestTableModel::RequestTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void RequestTableModel::resetTo(const std::deque<RequestDone>& ring, const std::deque<SimTime>& times) {
  beginResetModel();
  rows_.clear();
  for (std::size_t i = 0; i < ring.size(); ++i) rows_.push_back(Row{ring[i], times[i]});
  endResetModel();
}

RequestTableModel::SyncResult RequestTableModel::sync(const std::deque<RequestDone>& ring,
                                                      const std::deque<SimTime>& times) {
  SyncResult result;
  if (ring.size() != times.size()) return result;  // the store keeps them in step; never index past either
  if (rows_.empty() || ring.empty()) {
    if (rows_.empty() && ring.empty()) return result;
    if (rows_.empty()) {
      beginInsertRows({}, 0, static_cast<int>(ring.size()) - 1);
      for (std::size_t i = 0; i < ring.size(); ++i) rows_.push_back(Row{ring[i], times[i]});
      endInsertRows();
      result.inserted = static_cast<int>(ring.size());
    } else {
      resetTo(ring, times);  // the store was cleared
      result.reset = true;
    }
    return result;
  }

  // Where is our newest row in the ring? A frame adds a few requests, so look from the back and
  // stop once the ring's times fall below it.
  const Row& newest = rows_.back();
  std::optional<std::size_t> held_until;
  for (std::size_t i = ring.size(); i-- > 0;) {
    if (times[i] < newest.finished) break;
    if (times[i] == newest.finished && ring[i].request == newest.done.request) {
      held_until = i;
      break;
    }
  }
  const std::size_t still_held = held_until ? *held_until + 1 : 0;
  // Our rows still in the ring are its first `still_held`; anything else means another stream.
  if (!held_until || still_held > rows_.size() ||
      rows_[rows_.size() - still_held].done.request != ring.front().request ||
      rows_[rows_.size() - still_held].finished != times.front()) {
    resetTo(ring, times);
    result.reset = true;
    return result;
  }

  const std::size_t dropped = rows_.size() - still_held;
  if (dropped > 0) {
    beginRemoveRows({}, 0, static_cast<int>(dropped) - 1);
    rows_.erase(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(dropped));
    endRemoveRows();
  }
  if (ring.size() > still_held) {
    const int first = static_cast<int>(rows_.size());
    beginInsertRows({}, first, first + static_cast<int>(ring.size() - still_held) - 1);
    for (std::size_t i = still_held; i < ring.size(); ++i) rows_.push_back(Row{ring[i], times[i]});
    endInsertRows();
  }
  result.removed = static_cast<int>(dropped);
  result.inserted = static_cast<int>(ring.size() - still_held);
  return result;
}

void RequestTableModel::setWorkerNames(std::vector<QString> names) {
  if (names == worker_names_) return;
  worker_names_ = std::move(names);
  if (!rows_.empty()) emit dataChanged(index(0, Worker), index(rowCount() - 1, Worker));
}

std::optional<int> RequestTableModel::rowOf(RequestId request) const {
  for (std::size_t i = rows_.size(); i-- > 0;)
    if (rows_[i].done.request == request) return static_cast<int>(i);
  return std::nullopt;
}

int RequestTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RequestTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RequestTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  const RequestDone& d = row.done;
  const bool failed = d.status != RequestStatus::Ok;
  // A failure read from a log line that names no request (id 0): it counts, but has no session,
  // turn, path or decision to show, and showing 0 / direct would invent them.
  const bool unnamed = d.request == 0;
  const QString none = QStringLiteral("—");
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Request:
          return unnamed ? none : QString::number(d.request);
        case Session:
          return d.session == 0 ? none : QString::number(d.session);
        case Turn:
          return unnamed ? QVariant(none) : QVariant(d.turn);
        case Worker:
          return workerLabel(worker_names_, d.worker);
        case Path:
          return unnamed ? none : QString::fromLatin1(toString(d.path));
        case Status:
          return QString::fromLatin1(toString(d.status));
        case Ttft:
          return d.ttft < 0 ? QStringLiteral("—") : seconds(d.ttft);
        case E2e:
          return seconds(d.e2e);
      }
      break;
    case SortRole:
      switch (index.column()) {
        case Request:
          return QVariant::fromValue<qulonglong>(d.request);
        case Session:
          return QVariant::fromValue<qulonglong>(d.session);
        case Turn:
          return d.turn;
        case Worker:
          return d.worker;
        case Path:
          return static_cast<int>(d.path);
        case Status:
          return static_cast<int>(d.status);
        case Ttft:
          return QVariant::fromValue<qlonglong>(d.ttft);  // -1 (no token) sorts first
        case E2e:
          return QVariant::fromValue<qlonglong>(d.e2e);
      }
      break;
    case RequestIdRole:
      return QVariant::fromValue<qulonglong>(d.request);
    case Qt::TextAlignmentRole:
      if (index.column() == Request || index.column() == Session || index.column() == Turn || index.column() == Ttft ||
          index.column() == E2e)
        return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Qt::ForegroundRole:
      if (failed) return kFailedText;
      break;
    case Qt::ToolTipRole:
      if (unnamed) return unnamedFailureText(d);
      if (failed && !d.error.empty()) return QString::fromStdString(d.error);
      if (index.column() == Ttft && d.ttft < 0) return tr("No token was produced");
      break;
    default:
      break;
  }
  return {};
}

QVariant RequestTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Request:
      return tr("Request");
    case Session:
      return tr("Session");
    case Turn:
      return tr("Turn");
    case Worker:
      return tr("Worker");
    case Path:
      return tr("Path");
    case Status:
      return tr("Status");
    case Ttft:
      return tr("TTFT (s)");
    case E2e:
      return tr("E2E (s)");
  }
  return {};
}

}  // namespace kvscope
