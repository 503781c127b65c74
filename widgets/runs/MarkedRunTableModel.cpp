#include "widgets/runs/MarkedRunTableModel.h"

#include <QBrush>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

#include <algorithm>
#include <cmath>

#include "core/run/RunMarkBook.h"
#include "widgets/common/PaletteTint.h"

namespace kvscope {

namespace {

// Better and worse against the baseline; mixed into the palette's Base at data() time, so a
// light/dark switch repaints them right.
const QColor kBetterHue(0x2c, 0xa0, 0x2c);
const QColor kWorseHue(0xd6, 0x27, 0x28);
// Below this the change is noise in a live run's numbers: shown in the tooltip, not tinted.
constexpr double kTintThresholdPct = 1.0;

QString fromStd(const std::string& s) { return QString::fromStdString(s); }

// -1: lower is better (latency, failures, evictions); 0: neither (how long, how many).
int direction(MarkedRunTableModel::Metric m) {
  using M = MarkedRunTableModel;
  return (m == M::Duration || m == M::Requests || m == M::Diagnosis) ? 0 : -1;
}

QString formatSeconds(double s) { return QString::number(s, 'f', s < 10 ? 3 : 1) + QStringLiteral(" s"); }

}  // namespace

QString MarkedRunTableModel::formatValue(Metric m, double v) {
  switch (m) {
    case Duration:
      return QString::number(v, 'f', v < 10 ? 1 : 0) + QStringLiteral(" s");
    case FailedPct:
      return QString::number(v, 'f', 1) + QStringLiteral("%");
    case TtftP50:
    case TtftP99:
    case E2eP50:
    case E2eP99:
      return formatSeconds(v);
    default:
      return QString::number(static_cast<long long>(std::llround(v)));
  }
}

namespace {

QString metricLabel(MarkedRunTableModel::Metric m) {
  using M = MarkedRunTableModel;
  switch (m) {
    case M::Duration:
      return QObject::tr("Duration");
    case M::Requests:
      return QObject::tr("Requests");
    case M::FailedPct:
      return QObject::tr("Failed");
    case M::TtftP50:
      return QObject::tr("TTFT p50");
    case M::TtftP99:
      return QObject::tr("TTFT p99");
    case M::E2eP50:
      return QObject::tr("E2E p50");
    case M::E2eP99:
      return QObject::tr("E2E p99");
    case M::Evictions:
      return QObject::tr("Evictions");
    case M::Reseeds:
      return QObject::tr("Reseeds");
    default:
      return QObject::tr("Diagnosis");
  }
}

// The failure modes found, each once, in the order diagnosis reported them ("A, C'").
QString modesOf(const RunSummary& s) {
  QStringList modes;
  for (const Finding& f : s.diagnosis)
    if (!modes.contains(fromStd(f.mode))) modes << fromStd(f.mode);
  return modes.join(QStringLiteral(", "));
}

}  // namespace

QString MarkedRunTableModel::runLabel(const RunMarked& start) {
  return QStringLiteral("%1 '%2'").arg(start.index).arg(fromStd(start.name));
}

MarkedRunTableModel::MarkedRunTableModel(QObject* parent) : QAbstractTableModel(parent) {}

std::optional<double> MarkedRunTableModel::value(const MarkedRun& run, Metric metric) {
  const RunSummary& s = run.summary;
  switch (metric) {
    case Duration:
      return timeToSeconds(run.session_end - run.session_start);
    case Requests:
      return static_cast<double>(s.total);
    case FailedPct:
      return s.total > 0 ? std::optional<double>(s.failure_rate * 100) : std::nullopt;
    case TtftP50:
      return s.ttft_s.count ? std::optional<double>(s.ttft_s.p50) : std::nullopt;
    case TtftP99:
      return s.ttft_s.count ? std::optional<double>(s.ttft_s.p99) : std::nullopt;
    case E2eP50:
      return s.e2e_s.count ? std::optional<double>(s.e2e_s.p50) : std::nullopt;
    case E2eP99:
      return s.e2e_s.count ? std::optional<double>(s.e2e_s.p99) : std::nullopt;
    case Evictions:
      return static_cast<double>(s.eviction_count);
    case Reseeds:
      return static_cast<double>(s.reseeds);
    case Diagnosis:
      return static_cast<double>(s.diagnosis.size());
    default:
      return std::nullopt;
  }
}

void MarkedRunTableModel::addParameters(const RunMarked& start) {
  for (const auto& [name, v] : start.parameters) {
    if (parameterColumn(name) >= 0) continue;
    const int column = FirstParameterColumn + parameterCount();
    beginInsertColumns({}, column, column);
    parameters_.push_back(name);
    endInsertColumns();
  }
}

int MarkedRunTableModel::placeRow(const RunMarked& start) {
  addParameters(start);
  auto it = std::lower_bound(rows_.begin(), rows_.end(), start.index,
                             [](const Row& r, std::uint32_t index) { return r.start.index < index; });
  const int row = static_cast<int>(it - rows_.begin());
  if (it != rows_.end() && it->start.index == start.index) return row;
  beginInsertRows({}, row, row);
  rows_.insert(it, Row{start, std::nullopt, {}});
  endInsertRows();
  return row;
}

void MarkedRunTableModel::openRun(const RunMarked& start) {
  const int row = placeRow(start);
  rows_[static_cast<std::size_t>(row)] = Row{start, std::nullopt, {}};
  emit dataChanged(index(row, 0), index(row, columnCount() - 1));
}

void MarkedRunTableModel::setProgress(const OpenRunProgress& progress) {
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    Row& row = rows_[r];
    if (row.done || row.progress == progress) continue;
    row.progress = progress;
    const int i = static_cast<int>(r);
    emit dataChanged(index(i, 0), index(i, columnCount() - 1));
  }
}

void MarkedRunTableModel::addRun(const MarkedRun& run) {
  const int row = placeRow(run.start);
  Row& r = rows_[static_cast<std::size_t>(row)];
  r.start = run.start;
  r.done = run;
  // A new summary for the baseline moves every row's comparison; otherwise only this row changed.
  const bool is_baseline = baseline_ == run.start.index;
  emit dataChanged(index(is_baseline ? 0 : row, 0), index(is_baseline ? rowCount() - 1 : row, columnCount() - 1));
}

void MarkedRunTableModel::clear() {
  beginResetModel();
  rows_.clear();
  parameters_.clear();
  baseline_.reset();
  endResetModel();
}

void MarkedRunTableModel::setBaseline(std::optional<std::uint32_t> run_index) {
  if (baseline_ == run_index) return;
  baseline_ = run_index;
  if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

int MarkedRunTableModel::completedCount() const {
  return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.done.has_value(); }));
}

const RunMarked* MarkedRunTableModel::openStart() const {
  for (const Row& r : rows_)
    if (!r.done) return &r.start;
  return nullptr;
}

const MarkedRun* MarkedRunTableModel::completedRun(int row) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  const Row& r = rows_[static_cast<std::size_t>(row)];
  return r.done ? &*r.done : nullptr;
}

int MarkedRunTableModel::rowOfRun(std::uint32_t run_index) const {
  for (std::size_t r = 0; r < rows_.size(); ++r)
    if (rows_[r].start.index == run_index) return static_cast<int>(r);
  return -1;
}

int MarkedRunTableModel::parameterColumn(const std::string& name) const {
  auto it = std::find(parameters_.begin(), parameters_.end(), name);
  return it == parameters_.end() ? -1 : FirstParameterColumn + static_cast<int>(it - parameters_.begin());
}

const MarkedRun* MarkedRunTableModel::baselineRun() const {
  return baseline_ ? completedRun(rowOfRun(*baseline_)) : nullptr;
}

std::optional<double> MarkedRunTableModel::change(const Row& row, Metric metric) const {
  const MarkedRun* base = baselineRun();
  if (!base || !row.done || metric == Diagnosis || row.start.index == base->start.index) return std::nullopt;
  const auto v = value(*row.done, metric), b = value(*base, metric);
  if (!v || !b) return std::nullopt;
  if (*b == 0) return *v == 0 ? std::optional<double>(0) : std::nullopt;  // no percentage of nothing
  return (*v - *b) / std::abs(*b) * 100;
}

std::optional<bool> MarkedRunTableModel::better(const Row& row, Metric metric) const {
  const MarkedRun* base = baselineRun();
  if (!base || !row.done || direction(metric) == 0 || row.start.index == base->start.index) return std::nullopt;
  const auto v = value(*row.done, metric), b = value(*base, metric);
  if (!v || !b || *v == *b) return std::nullopt;
  // Against none, any change counts (a run's first failures); otherwise only beyond the noise.
  if (*b != 0 && std::abs(*v - *b) / std::abs(*b) * 100 < kTintThresholdPct) return std::nullopt;
  return (*v < *b) == (direction(metric) < 0);
}

int MarkedRunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int MarkedRunTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FirstParameterColumn + parameterCount() + MetricCount;
}

QString MarkedRunTableModel::parameterValue(const Row& row, int parameter) const {
  const std::string& name = parameters_[static_cast<std::size_t>(parameter)];
  for (const auto& [n, v] : row.start.parameters)
    if (n == name) return fromStd(v);
  return {};
}

QVariant MarkedRunTableModel::metricData(const Row& row, Metric metric, int role) const {
  if (!row.done) {  // the open run: what the stream has told so far
    const OpenRunProgress& p = row.progress;
    std::optional<double> v;
    if (metric == Duration) v = p.elapsed_s;
    if (metric == Requests) v = static_cast<double>(p.requests);
    if (metric == FailedPct && p.requests > 0)
      v = 100.0 * static_cast<double>(p.failed) / static_cast<double>(p.requests);
    if (!v) return {};
    if (role == SortRole) return *v;
    if (role != Qt::DisplayRole) return {};
    return metric == Duration ? tr("running, %1").arg(formatValue(metric, *v)) : formatValue(metric, *v);
  }
  if (metric == Diagnosis) {
    if (role == Qt::DisplayRole) return modesOf(row.done->summary);
    return role == SortRole ? QVariant(static_cast<int>(row.done->summary.diagnosis.size())) : QVariant();
  }
  const auto v = value(*row.done, metric);
  switch (role) {
    case Qt::DisplayRole:
      return v ? formatValue(metric, *v) : QString();
    case SortRole:
      return v ? QVariant(*v) : QVariant();
    case ChangeRole: {
      const auto c = change(row, metric);
      return c ? QVariant(*c) : QVariant();
    }
    case Qt::BackgroundRole: {
      const auto verdict = better(row, metric);
      if (!verdict) return {};
      return QBrush(mixHue(QGuiApplication::palette().color(QPalette::Base), *verdict ? kBetterHue : kWorseHue, 0.3));
    }
    default:
      return {};
  }
}

QString MarkedRunTableModel::tooltip(const Row& row, int column) const {
  if (column < FirstParameterColumn) {
    QString text =
        tr("Run %1, started by %2").arg(runLabel(row.start), fromStd(row.start.who.empty() ? "?" : row.start.who));
    if (!row.done) return text + tr("\nRunning: its summary comes when it ends");
    text += tr("\nEnded by %1").arg(fromStd(row.done->ended_by));
    if (row.done->ended_by == kRunEndedBySession) text += tr(" (cut short: the session stopped first)");
    return text + tr("\nDouble-click for its summary; right-click to compare the others against it");
  }
  const int metric = column - FirstParameterColumn - parameterCount();
  if (metric < 0) return {};
  const auto m = static_cast<Metric>(metric);
  if (!row.done) return m <= FailedPct ? tr("So far: the run is still going") : tr("Comes when the run ends");
  if (m == Diagnosis) {
    QStringList lines;
    for (const Finding& f : row.done->summary.diagnosis)
      lines << QStringLiteral("%1 %2: %3").arg(fromStd(f.mode), fromStd(f.name), fromStd(f.evidence));
    return lines.isEmpty() ? tr("No failure mode found") : lines.join(QLatin1Char('\n'));
  }
  const auto v = value(*row.done, m);
  QString text = metricLabel(m) + QStringLiteral(": ") + (v ? formatValue(m, *v) : tr("none"));
  const MarkedRun* base = baselineRun();
  if (!base) return text;
  if (base->start.index == row.start.index) return text + tr("\nThe baseline: the other runs are compared against it");
  const auto b = value(*base, m);
  text += tr("\nBaseline run %1: %2").arg(runLabel(base->start), b ? formatValue(m, *b) : tr("none"));
  if (const auto c = change(row, m))
    text += QStringLiteral(", %1%2%").arg(*c >= 0 ? QStringLiteral("+") : QString()).arg(*c, 0, 'f', 1);
  if (const auto verdict = better(row, m)) text += *verdict ? tr(" (better)") : tr(" (worse)");
  return text;
}

QVariant MarkedRunTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  const int column = index.column();
  switch (role) {
    case RunIndexRole:
      return static_cast<uint>(row.start.index);
    case RunningRole:
      return !row.done.has_value();
    case Qt::ToolTipRole:
      return tooltip(row, column);
    case Qt::FontRole: {
      // Not by colour alone: the open run is italic, the baseline bold.
      if (row.done && baseline_ != row.start.index) return {};
      QFont font;
      font.setItalic(!row.done);
      font.setBold(row.done.has_value());
      return font;
    }
    case Qt::TextAlignmentRole:
      return column == NameColumn || column == columnOf(Diagnosis) ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default:
      break;
  }
  if (column == IndexColumn)
    return role == Qt::DisplayRole || role == SortRole ? QVariant(static_cast<uint>(row.start.index)) : QVariant();
  if (column == NameColumn) {
    if (role == SortRole) return fromStd(row.start.name);
    if (role != Qt::DisplayRole) return {};
    return baseline_ == row.start.index ? tr("%1 (baseline)").arg(fromStd(row.start.name)) : fromStd(row.start.name);
  }
  if (column < FirstParameterColumn + parameterCount()) {
    const QString v = parameterValue(row, column - FirstParameterColumn);
    if (role == Qt::DisplayRole) return v;
    if (role != SortRole) return {};
    bool numeric = false;
    const double d = v.toDouble(&numeric);  // K=50 before K=200
    return numeric ? QVariant(d) : QVariant(v);
  }
  return metricData(row, static_cast<Metric>(column - FirstParameterColumn - parameterCount()), role);
}

QVariant MarkedRunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (role == Qt::ToolTipRole) {
    if (section >= FirstParameterColumn && section < FirstParameterColumn + parameterCount())
      return tr("A parameter the sweep script gave with its start marker (kvscope-cli mark --param)");
    if (section == columnOf(Diagnosis)) return tr("The failure modes diagnosis found in the run");
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  if (section == IndexColumn) return tr("#");
  if (section == NameColumn) return tr("Run");
  if (section < FirstParameterColumn + parameterCount())
    return fromStd(parameters_[static_cast<std::size_t>(section - FirstParameterColumn)]);
  return metricLabel(static_cast<Metric>(section - FirstParameterColumn - parameterCount()));
}

}  // namespace kvscope
