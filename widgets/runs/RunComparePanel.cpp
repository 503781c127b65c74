#include "widgets/runs/RunComparePanel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

#include "core/telemetry/ComparedRun.h"
#include "widgets/common/TableCopy.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

namespace {
QString number(std::optional<double> v, int decimals) {
  return v ? QString::number(*v, 'f', decimals) : QStringLiteral("-");
}

// "+0.120 (+14.6 %)": the change from `from` and, where that is not 0, its share of it.
QString changeText(const SideBySideRow& row, std::optional<double> from) {
  const std::optional<double> d = row.changeFrom(from);
  if (!d) return QStringLiteral("-");
  QString text = (*d > 0 ? QStringLiteral("+") : QString()) + QString::number(*d, 'f', row.decimals);
  if (const std::optional<double> r = row.relativeChangeFrom(from); r && std::abs(*r) < 100)
    text += QStringLiteral(" (%1%2 %)").arg(*r > 0 ? QStringLiteral("+") : QString()).arg(*r * 100, 0, 'f', 1);
  return text;
}

// Green where B is better than what it is compared with, red where it is worse; none for no change.
QColor changeColor(const SideBySideRow& row, std::optional<double> from) {
  const std::optional<double> d = row.changeFrom(from);
  if (!d || *d == 0) return {};
  const bool better = (*d < 0) == row.lower_is_better;
  return better ? QColor(0x2c, 0xa0, 0x2c) : QColor(0xd6, 0x27, 0x28);
}

QTableWidgetItem* cell(const QString& text, const QColor& color = {}) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  if (color.isValid()) item->setForeground(color);
  return item;
}

QTableWidget* makeTable(QWidget* parent, const QStringList& headers) {
  auto* table = new QTableWidget(0, static_cast<int>(headers.size()), parent);
  table->setHorizontalHeaderLabels(headers);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  enableTableCopy(*table);
  return table;
}
}  // namespace

RunComparePanel::RunComparePanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      heading_(new QLabel(this)),
      summary_(makeTable(this, {})),
      workers_(makeTable(
          this, {tr("share A (%)"), tr("share B (%)"), tr("B - A"), tr("TTFT p90 A (s)"), tr("TTFT p90 B (s)"),
                 tr("B - A"), tr("KV peak A (%)"), tr("KV peak B (%)"), tr("evictions A"), tr("evictions B")})) {
  heading_->setWordWrap(true);
  heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* tables = new QHBoxLayout;
  tables->addWidget(summary_, 2);
  tables->addWidget(workers_, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(heading_);
  layout->addLayout(tables, 1);
  connect(&view, &ViewState::comparisonChanged, this, &RunComparePanel::fill);
  fill();
}

QString RunComparePanel::heading() const { return heading_->text(); }

void RunComparePanel::fill() {
  const ComparedRun* run = view().comparison();
  summary_->setVisible(run != nullptr);
  workers_->setVisible(run != nullptr);
  if (!run) {
    heading_->setText(
        tr("No run compared. With a recording open, File > Compare with... draws a second "
           "recording beside it: B dashed on every chart, the numbers of both here."));
    return;
  }
  const double offset = timeToSeconds(view().comparisonOffset());
  const bool base = run->summary_base.has_value();
  QString b = QString::fromStdString(run->name_b);
  if (!run->b_label.empty()) b += QStringLiteral(", ") + QString::fromStdString(run->b_label);
  QString text = tr("A (solid): %1, policy %2.   B (dashed): %3, policy %4.   B is drawn %5 s later "
                    "(View > Comparison offset).")
                     .arg(QString::fromStdString(run->name_a), QString::fromStdString(run->summary_a.policy), b,
                          QString::fromStdString(run->summary_b.policy))
                     .arg(offset, 0, 'f', 1);
  if (base)
    text +=
        tr("\nB - twin is the change as the twin sees it (both are the twin on A's traffic, one seed; for "
           "intervals: kvscope-cli sweep --trace with --seeds); B - A adds the twin's own error.");
  heading_->setText(text);
  // With a baseline: A, the baseline, B, B - baseline, B - A; else A, B, B - A.
  QStringList headers{tr("A")};
  if (base) headers << QString::fromStdString(run->base_label);
  headers << tr("B");
  if (base) headers << tr("B - twin");
  headers << tr("B - A");
  summary_->setColumnCount(static_cast<int>(headers.size()));
  summary_->setHorizontalHeaderLabels(headers);
  const auto& rows = run->side_by_side.summary;
  summary_->setRowCount(static_cast<int>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<int>(i);
    const SideBySideRow& row = rows[i];
    int c = 0;
    summary_->setVerticalHeaderItem(r, new QTableWidgetItem(QString::fromStdString(row.label)));
    summary_->setItem(r, c++, cell(number(row.a, row.decimals)));
    if (base) summary_->setItem(r, c++, cell(number(row.base, row.decimals)));
    summary_->setItem(r, c++, cell(number(row.b, row.decimals)));
    if (base) summary_->setItem(r, c++, cell(changeText(row, row.base), changeColor(row, row.base)));
    summary_->setItem(r, c++, cell(changeText(row, row.a), changeColor(row, row.a)));
  }
  const auto& workers = run->side_by_side.workers;
  workers_->setRowCount(static_cast<int>(workers.size()));
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const auto r = static_cast<int>(i);
    const WorkerSideBySide& w = workers[i];
    workers_->setVerticalHeaderItem(r, new QTableWidgetItem(QString::fromStdString(w.worker)));
    int c = 0;
    for (const SideBySideRow* pair : {&w.share, &w.ttft_p90}) {
      workers_->setItem(r, c++, cell(number(pair->a, pair->decimals)));
      workers_->setItem(r, c++, cell(number(pair->b, pair->decimals)));
      const std::optional<double> d = pair->change();
      workers_->setItem(r, c++,
                        cell(d ? QString::number(*d, 'f', pair->decimals) : QStringLiteral("-"),
                             pair == &w.share ? QColor() : changeColor(*pair, pair->a)));
    }
    for (const SideBySideRow* pair : {&w.kv_peak, &w.evictions}) {
      workers_->setItem(r, c++, cell(number(pair->a, pair->decimals)));
      workers_->setItem(r, c++, cell(number(pair->b, pair->decimals)));
    }
  }
}

}  // namespace kvscope
