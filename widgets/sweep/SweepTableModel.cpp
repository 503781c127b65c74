#include "widgets/sweep/SweepTableModel.h"

#include <QDir>
#include <QFont>

#include <algorithm>
#include <cmath>

namespace kvscope {

SweepTableModel::SweepTableModel(QObject* parent) : QAbstractTableModel(parent) {}

const std::vector<std::string>& SweepTableModel::mainMetrics() {
  static const std::vector<std::string> keys{"e2e_mean_s", "e2e_p90_s", "ttft_p90_s", "failure_rate", "evictions"};
  return keys;
}

void SweepTableModel::setSweep(const SweepData& data, const QString& dir) {
  // Runs filling in keep the shape: update the cells in place so views keep selection and scroll.
  const bool same_shape = data.points.size() == data_.points.size() && data.seeds.size() == data_.seeds.size();
  if (!same_shape) beginResetModel();
  data_ = data;
  analysis_ = SweepAnalysis::of(data_);
  dir_ = dir;
  if (!same_shape) {
    endResetModel();
  } else if (rowCount() > 0) {
    emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
  }
}

void SweepTableModel::setFocusMetric(const std::string& key) {
  if (key == focus_) return;
  focus_ = key;
  if (rowCount() > 0) emit dataChanged(index(0, changeColumn()), index(rowCount() - 1, verdictColumn()));
  emit headerDataChanged(Qt::Horizontal, changeColumn(), verdictColumn());
}

int SweepTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(data_.points.size());
}

int SweepTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FirstMetricColumn + static_cast<int>(mainMetrics().size());
}

const SweepMetric* SweepTableModel::metric(const std::string& key) const {
  const std::size_t m = analysis_.metricIndex(key);
  return m < analysis_.metrics.size() ? &analysis_.metrics[m] : nullptr;
}

const MetricCell* SweepTableModel::cell(int row, const std::string& key) const {
  const std::size_t m = analysis_.metricIndex(key);
  if (row < 0 || static_cast<std::size_t>(row) >= analysis_.cells.size() || m >= analysis_.metrics.size())
    return nullptr;
  return &analysis_.cells[static_cast<std::size_t>(row)][m];
}

QString SweepTableModel::pathOf(std::size_t point, std::size_t seed) const {
  if (point >= data_.recordings.size() || seed >= data_.recordings[point].size()) return {};
  const std::string& name = data_.recordings[point][seed];
  if (name.empty()) return {};
  return QDir(dir_).filePath(QString::fromStdString(name));
}

QString SweepTableModel::recordingFor(int row, int column) const {
  const auto p = static_cast<std::size_t>(row);
  if (p >= data_.runs.size()) return {};
  const auto& runs = data_.runs[p];
  std::vector<std::pair<double, std::size_t>> by_value;  // (metric value, seed index) of finished runs
  const int metric_index = column - FirstMetricColumn;
  if (metric_index >= 0 && metric_index < static_cast<int>(mainMetrics().size()))
    if (const SweepMetric* m = metric(mainMetrics()[static_cast<std::size_t>(metric_index)]))
      for (std::size_t k = 0; k < runs.size(); ++k)
        if (runs[k])
          if (auto v = m->value(*runs[k])) by_value.emplace_back(*v, k);
  if (!by_value.empty()) {
    std::sort(by_value.begin(), by_value.end());
    return pathOf(p, by_value[(by_value.size() - 1) / 2].second);  // the lower median: a real run
  }
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (runs[k]) return pathOf(p, k);
  return {};
}

QString SweepTableModel::display(int row, int column) const {
  const auto p = static_cast<std::size_t>(row);
  if (column == PointColumn) {
    QString label = QString::fromStdString(data_.points[p].label());
    return p == data_.baseline ? label + tr(" (baseline)") : label;
  }
  if (column == RunsColumn)
    return QStringLiteral("%1/%2")
        .arg(p < analysis_.runs_done.size() ? analysis_.runs_done[p] : 0)
        .arg(data_.seeds.size());
  const int metric_index = column - FirstMetricColumn;
  if (metric_index >= 0 && metric_index < static_cast<int>(mainMetrics().size())) {
    const std::string& key = mainMetrics()[static_cast<std::size_t>(metric_index)];
    const MetricCell* c = cell(row, key);
    const SweepMetric* m = metric(key);
    if (!c || !m || c->values.empty()) return {};
    const MeanInterval& i = c->interval;
    if (!i.hasInterval()) return QString::fromStdString(m->format(i.mean));
    return QStringLiteral("%1 [%2, %3]")
        .arg(QString::fromStdString(m->format(i.mean)), QString::fromStdString(m->format(i.low())),
             QString::fromStdString(m->format(i.high())));
  }
  if (p == data_.baseline) return column == changeColumn() ? tr("baseline") : QString();
  const MetricCell* c = cell(row, focus_);
  if (!c) return {};
  if (column == changeColumn())
    return c->change_pct ? QStringLiteral("%1%2%")
                               .arg(*c->change_pct >= 0 ? QStringLiteral("+") : QString())
                               .arg(*c->change_pct, 0, 'f', 1)
                         : QString();
  if (!c->comparison) return {};
  const PairedComparison& cmp = *c->comparison;
  if (cmp.pairs == 0) return column == verdictColumn() ? QString::fromStdString(cmp.verdictText()) : QString();
  if (column == pValueColumn()) return QString::number(cmp.p_value, 'g', 3);
  // The verdict with what it rests on: how many pairs, and the smallest p they could ever give.
  return QStringLiteral("%1 (n=%2, min p %3)")
      .arg(QString::fromStdString(cmp.verdictText()))
      .arg(cmp.pairs)
      .arg(QString::number(cmp.smallest_p, 'g', 3));
}

QString SweepTableModel::tooltip(int row, int column) const {
  const int metric_index = column - FirstMetricColumn;
  std::string key = focus_;
  if (metric_index >= 0 && metric_index < static_cast<int>(mainMetrics().size()))
    key = mainMetrics()[static_cast<std::size_t>(metric_index)];
  else if (column < ChangeColumn)
    return tr("Double-click a cell to replay a run of this point");
  const MetricCell* c = cell(row, key);
  const SweepMetric* m = metric(key);
  if (!c || !m || c->values.empty()) return tr("no run of this point has finished yet");
  QString text = QStringLiteral("%1: n = %2").arg(QString::fromStdString(m->label)).arg(c->interval.n);
  if (c->interval.hasInterval()) {
    const auto scale = toString(c->interval.scale);
    text += tr(", 95% CI [%1, %2] (%3)")
                .arg(QString::fromStdString(m->format(c->interval.low())),
                     QString::fromStdString(m->format(c->interval.high())),
                     QString::fromUtf8(scale.data(), static_cast<qsizetype>(scale.size())));
  }
  if (c->change_pct) text += tr("\nchange vs baseline: %1%").arg(*c->change_pct, 0, 'f', 1);
  if (c->comparison) text += QLatin1Char('\n') + QString::fromStdString(c->comparison->summary());
  return text + tr("\nDouble-click to replay the median run");
}

QVariant SweepTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const int row = index.row(), column = index.column();
  switch (role) {
    case Qt::DisplayRole:
      return display(row, column);
    case Qt::ToolTipRole:
      return tooltip(row, column);
    case Qt::TextAlignmentRole:
      return column == PointColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
      if (static_cast<std::size_t>(row) == data_.baseline) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    case RecordingRole:
      return recordingFor(row, column);
    case RecordingsRole: {
      QStringList paths;
      const auto p = static_cast<std::size_t>(row);
      for (std::size_t k = 0; k < data_.runs[p].size(); ++k)
        if (data_.runs[p][k]) paths << pathOf(p, k);
      return paths;
    }
    case PointRole:
      return row;
    default:
      return {};
  }
}

QVariant SweepTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
  if (role == Qt::ToolTipRole && section >= ChangeColumn && section <= VerdictColumn)
    return tr(
        "Of the metric chosen for the plot: change of the mean against the baseline point, the exact sign-flip "
        "test's p-value on the per-seed pairs, and its verdict. n pairs can never give p below 2/2^n (min p): "
        "when that is above the level the verdict says how many seeds it needs instead of \"significant\"");
  if (role != Qt::DisplayRole) return {};
  if (section == PointColumn) return tr("Grid point");
  if (section == RunsColumn) return tr("Runs");
  const int metric_index = section - FirstMetricColumn;
  if (metric_index >= 0 && metric_index < static_cast<int>(mainMetrics().size())) {
    const std::string& key = mainMetrics()[static_cast<std::size_t>(metric_index)];
    const SweepMetric* m = metric(key);
    return m ? QString::fromStdString(m->label) : QString::fromStdString(key);
  }
  const SweepMetric* focus = metric(focus_);
  const QString name = focus ? QString::fromStdString(focus->label) : QString::fromStdString(focus_);
  if (section == changeColumn()) return tr("Δ %1").arg(name);  // against the baseline row (tooltip)
  if (section == pValueColumn()) return tr("p (sign-flip)");
  return tr("Verdict");
}

}  // namespace kvscope
