#include "widgets/charts/LinkHealthPanel.h"

#include <algorithm>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "core/telemetry/TelemetryStore.h"
#include "widgets/charts/LinkAggregateModel.h"
#include "widgets/charts/LinkHealthModel.h"

namespace kvscope {

LinkHealthPanel::LinkHealthPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      model_(new LinkHealthModel(this)),
      aggregate_(new LinkAggregateModel(this)),
      stack_(new QStackedWidget(this)),
      grid_(new QTableView(this)),
      aggregate_page_(new QWidget(this)),
      group_by_(new QComboBox(this)),
      back_(new QPushButton(tr("< All"), this)),
      drilled_(new QLabel(this)),
      aggregate_table_(new QTableView(this)),
      failures_(new QLabel(this)) {
  grid_->setModel(model_);
  grid_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  grid_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  grid_->setWordWrap(false);  // two short lines per cell, elided rather than wrapped into a third
  failures_->setWordWrap(true);
  failures_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  group_by_->addItem(tr("By prefill worker"));
  group_by_->addItem(tr("By decode worker"));
  back_->setToolTip(tr("Back to the groups"));
  back_->hide();
  aggregate_table_->setModel(aggregate_);
  aggregate_table_->verticalHeader()->hide();
  aggregate_table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  aggregate_table_->horizontalHeader()->setStretchLastSection(true);
  aggregate_table_->setSelectionMode(QAbstractItemView::NoSelection);
  aggregate_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  aggregate_table_->setTextElideMode(Qt::ElideRight);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(0, 0, 0, 0);
  bar->addWidget(back_);
  bar->addWidget(group_by_);
  bar->addWidget(drilled_, 1);
  auto* page = new QVBoxLayout(aggregate_page_);
  page->setContentsMargins(0, 0, 0, 0);
  page->setSpacing(2);
  page->addLayout(bar);
  page->addWidget(aggregate_table_);
  stack_->addWidget(grid_);
  stack_->addWidget(aggregate_page_);
  connect(group_by_, &QComboBox::currentIndexChanged, this, [this](int i) {
    aggregate_->setGroupBy(i == 1 ? LinkAggregateModel::GroupBy::Decode : LinkAggregateModel::GroupBy::Prefill);
    drillInto({});
  });
  connect(aggregate_table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    if (index.isValid() && aggregate_->drilled().isEmpty()) drillInto(aggregate_->nameAt(index.row()));
  });
  connect(back_, &QPushButton::clicked, this, [this] { drillInto({}); });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(stack_);
  layout->addWidget(failures_);
  layout->addStretch(1);
}

void LinkHealthPanel::drillInto(const QString& group) {
  aggregate_->drillInto(group);
  back_->setVisible(!group.isEmpty());
  group_by_->setVisible(group.isEmpty());
  drilled_->setText(group.isEmpty() ? tr("double-click a row for its links") : tr("links of %1").arg(group));
  if (last_store_) aggregate_->refresh(*last_store_);
}

void LinkHealthPanel::fitGrid() {
  // As tall as its rows (up to eight prefill workers): no link hidden below a scroll.
  const int rows = std::clamp(model_->rowCount(), 1, 8);
  int height = grid_->horizontalHeader()->sizeHint().height() + 2 * grid_->frameWidth();
  for (int r = 0; r < rows; ++r)
    height += r < model_->rowCount() ? grid_->verticalHeader()->sectionSize(r)
                                     : grid_->verticalHeader()->defaultSectionSize();
  if (stack_->height() != height) stack_->setFixedHeight(height);
}

void LinkHealthPanel::refresh(const TelemetryStore& store) {
  last_store_ = &store;
  const bool aggregated = store.links().size() > static_cast<std::size_t>(kGridMaxCells);
  if (aggregated != aggregated_) {
    aggregated_ = aggregated;
    stack_->setCurrentWidget(aggregated ? aggregate_page_ : static_cast<QWidget*>(grid_));
    if (aggregated) drillInto({});
  }
  if (aggregated) {
    aggregate_->refresh(store);
    // Up to 16 rows in view (every P of a 16 x 64 cluster), at least 3 on a small screen; the D view
    // and a drill-down scroll.
    const int row_height = aggregate_table_->verticalHeader()->defaultSectionSize();
    const int chrome = group_by_->sizeHint().height() + 2 + aggregate_table_->horizontalHeader()->sizeHint().height() +
                       2 * aggregate_table_->frameWidth();
    const int rows = std::clamp(aggregate_->rowCount(), 3, 16);
    stack_->setMinimumHeight(chrome + 3 * row_height);
    stack_->setMaximumHeight(chrome + rows * row_height);
  } else {
    model_->refresh(store);
    fitGrid();
  }
  // The most recent failures first, one line each: what an operator reads when a link is red.
  std::vector<const LinkSeries*> failed;
  for (const LinkSeries& l : store.links())
    if (l.last_failure_time >= 0) failed.push_back(&l);
  std::sort(failed.begin(), failed.end(),
            [](const LinkSeries* a, const LinkSeries* b) { return a->last_failure_time > b->last_failure_time; });
  QStringList lines;
  for (std::size_t i = 0; i < failed.size() && i < 4; ++i)
    lines << tr("%1 at %2 s: %3")
                 .arg(QString::fromStdString(failed[i]->name))
                 .arg(timeToSeconds(failed[i]->last_failure_time), 0, 'f', 1)
                 .arg(QString::fromStdString(failed[i]->last_failure));
  if (store.links().empty()) {
    failures_->setText(tr("No Mooncake links: this cluster is not disaggregated."));
  } else {
    failures_->setText(lines.isEmpty() ? tr("No transfer failure so far.") : tr("Last failures:\n") + lines.join('\n'));
  }
}

QString LinkHealthPanel::failureText() const { return failures_->text(); }

}  // namespace kvscope
