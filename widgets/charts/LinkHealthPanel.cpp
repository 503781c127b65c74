#include "widgets/charts/LinkHealthPanel.h"

#include <algorithm>

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "widgets/charts/LinkHealthModel.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

LinkHealthPanel::LinkHealthPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent), model_(new LinkHealthModel(this)), grid_(new QTableView(this)), failures_(new QLabel(this)) {
  grid_->setModel(model_);
  grid_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  grid_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  grid_->setWordWrap(false);  // two short lines per cell, elided rather than wrapped into a third
  failures_->setWordWrap(true);
  failures_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(grid_);
  layout->addWidget(failures_);
  layout->addStretch(1);
}

void LinkHealthPanel::refresh(const TelemetryStore& store) {
  model_->refresh(store);
  // As tall as its rows (up to eight prefill workers): no link hidden below a scroll.
  const int rows = std::clamp(model_->rowCount(), 1, 8);
  int height = grid_->horizontalHeader()->sizeHint().height() + 2 * grid_->frameWidth();
  for (int r = 0; r < rows; ++r) height += r < model_->rowCount() ? grid_->verticalHeader()->sectionSize(r) : grid_->verticalHeader()->defaultSectionSize();
  if (grid_->height() != height) grid_->setFixedHeight(height);
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
