#include "widgets/charts/DecodeLoadPanel.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

namespace {
constexpr int kMaxStateWidth = 340;
}  // namespace

DecodeLoadPanel::DecodeLoadPanel(ViewState& view, QWidget* parent)
    : TelemetryPanel(view, parent),
      model_(new DecodeLoadModel(this)),
      table_(new QTableView(this)),
      worst_first_(new QCheckBox(tr("Worst first"), this)),
      hidden_(new QLabel(this)) {
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  // A long cause (an unreachable worker's URL and error) is elided at this width; the tooltip has it all.
  table_->horizontalHeader()->setSectionResizeMode(DecodeLoadModel::State, QHeaderView::Interactive);
  table_->setTextElideMode(Qt::ElideMiddle);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // sized to its rows instead
  table_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustIgnored);
  table_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  connect(worst_first_, &QCheckBox::toggled, this, &DecodeLoadPanel::setWorstFirst);
  connect(&view, &ViewState::workersHighlighted, this,
          [this, &view] { model_->setHighlighted([&view](const QString& w) { return view.isHighlighted(w); }); });
  hidden_->hide();
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(4, 0, 4, 0);
  bar->addWidget(worst_first_);
  bar->addWidget(hidden_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(table_);
  layout->addLayout(bar);
  layout->addStretch(1);
  fitRows();
}

void DecodeLoadPanel::setWorstFirst(bool worst_first) {
  model_->setWorstFirst(worst_first);
  if (worst_first_->isChecked() != worst_first) worst_first_->setChecked(worst_first);
}

void DecodeLoadPanel::refresh(const TelemetryStore& store) {
  model_->refresh(store);
  table_->resizeColumnToContents(DecodeLoadModel::State);
  table_->setColumnWidth(DecodeLoadModel::State, std::min(table_->columnWidth(DecodeLoadModel::State), kMaxStateWidth));
  const int hidden = model_->hiddenCount();
  hidden_->setVisible(hidden > 0);
  if (hidden > 0) hidden_->setText(tr("+%n more decode worker(s), not as bad as these", nullptr, hidden));
  fitRows();
}

// Every row in view: the table's height is its header plus its rows (at least three, so the panel
// does not jump while a run starts).
void DecodeLoadPanel::fitRows() {
  const int rows = std::max(3, model_->rowCount());
  if (rows == fitted_rows_) return;
  fitted_rows_ = rows;
  const int row_height = table_->verticalHeader()->defaultSectionSize();
  const int height = table_->horizontalHeader()->sizeHint().height() + rows * row_height + 2 * table_->frameWidth();
  table_->setFixedHeight(height);
}

}  // namespace kvscope
