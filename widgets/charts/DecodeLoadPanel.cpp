#include "widgets/charts/DecodeLoadPanel.h"

#include <QCheckBox>
#include <QEvent>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/FractionBarDelegate.h"
#include "widgets/common/ViewState.h"

namespace kvscope {

namespace {
constexpr int kMaxStateWidth = 340;
// With many workers the strip lists at most this many (the worst) and counts the rest: 8 rows keep
// the panel under a quarter of a 1080p screen, next to the charts that need the height (a smaller
// window asks for fewer: setManyWorkerRows).
constexpr int kManyWorkerRows = 8;
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
  // KV use as a bar (at 64 D a column of numbers reads slowly). No column stretches: a number
  // right-aligned in a 1,200-pixel column sat far from its header and its row.
  table_->setItemDelegateForColumn(DecodeLoadModel::KvUse, new FractionBarDelegate(table_));
  table_->horizontalHeader()->setStretchLastSection(false);
  // A long cause (an unreachable worker's URL and error) is elided at this width; the tooltip has it all.
  table_->horizontalHeader()->setSectionResizeMode(DecodeLoadModel::State, QHeaderView::Interactive);
  table_->setTextElideMode(Qt::ElideMiddle);
  table_->setSelectionMode(QAbstractItemView::NoSelection);
  table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // sized to its rows instead
  table_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustIgnored);
  table_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  model_->setMaxRows(kManyWorkerRows);
  // While the pointer is over the rows their order holds (at 64 D it changed under the click).
  table_->viewport()->installEventFilter(this);
  connect(worst_first_, &QCheckBox::toggled, this, &DecodeLoadPanel::setWorstFirst);
  // A click picks the worker for the charts (Ctrl+click adds it, a second click drops it).
  connect(table_, &QTableView::clicked, this, [this, &view](const QModelIndex& index) {
    if (!index.isValid()) return;
    const QString name = model_->workerAt(index.row());
    QStringList selected = view.selectedWorkers();
    const bool add = QGuiApplication::keyboardModifiers() & Qt::ControlModifier;
    if (selected.contains(name))
      selected.removeAll(name);
    else if (add)
      selected << name;
    else
      selected = {name};
    view.selectWorkers(selected);
  });
  connect(&view, &ViewState::workersSelected, this,
          [this](const QStringList& workers) { model_->setSelectedWorkers(workers); });
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

bool DecodeLoadPanel::setManyWorkerRows(int rows) {
  rows = std::clamp(rows, 3, kManyWorkerRows);
  if (rows == model_->maxRows()) return false;
  model_->setMaxRows(rows);
  return true;
}

int DecodeLoadPanel::rowsFittingIn(int height) const {
  return (height - chromeHeight()) / std::max(1, table_->verticalHeader()->defaultSectionSize());
}

int DecodeLoadPanel::widestTableWidth() const {
  const QHeaderView& header = *table_->horizontalHeader();
  const QAbstractItemView& view = *table_;
  int width = kMaxStateWidth + 2 * table_->frameWidth();
  for (int column = 0; column < header.count(); ++column)
    if (column != DecodeLoadModel::State)  // numbers a digit longer than today's still fit
      width += std::max(header.sectionSizeHint(column), view.sizeHintForColumn(column)) * 11 / 10;
  return width;
}

int DecodeLoadPanel::chromeHeight() const {
  return table_->horizontalHeader()->sizeHint().height() + 2 * table_->frameWidth();
}

void DecodeLoadPanel::setWorstFirst(bool worst_first) {
  model_->setWorstFirst(worst_first);
  if (worst_first_->isChecked() != worst_first) worst_first_->setChecked(worst_first);
}

bool DecodeLoadPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_->viewport() && (event->type() == QEvent::Enter || event->type() == QEvent::Leave))
    model_->setFrozen(event->type() == QEvent::Enter);
  if (watched == table_->viewport() && event->type() == QEvent::Resize) fitRows();
  return TelemetryPanel::eventFilter(watched, event);
}

void DecodeLoadPanel::refresh(const TelemetryStore& store) {
  model_->refresh(store);
  view().setWorstWorkers(model_->worstWorkers());
  table_->resizeColumnToContents(DecodeLoadModel::State);
  table_->setColumnWidth(DecodeLoadModel::State, std::min(table_->columnWidth(DecodeLoadModel::State), kMaxStateWidth));
  const int hidden = model_->hiddenCount();
  // Past kWorstFirstAbove workers the rows are worst first anyway: the box says so.
  const bool forced = model_->rowCount() + hidden > DecodeLoadModel::kWorstFirstAbove;
  worst_first_->setEnabled(!forced);
  if (forced) worst_first_->setChecked(true);
  hidden_->setVisible(hidden > 0);
  if (hidden > 0) hidden_->setText(tr("and %1 more: %2").arg(hidden).arg(model_->hiddenSummary()));
  fitRows();
}

// Every row in view: the table's height is its header plus its rows (at least three, so the panel
// does not jump while a run starts).
// A window too narrow for every column (2x scaling) scrolls the table sideways: the scroll bar's
// height is added, or it would cover the last row.
void DecodeLoadPanel::fitRows() {
  const int rows = std::max(3, model_->rowCount());
  const bool sideways = table_->horizontalHeader()->length() > table_->viewport()->width();
  if (rows == fitted_rows_ && sideways == fitted_sideways_) return;
  fitted_rows_ = rows;
  fitted_sideways_ = sideways;
  table_->setFixedHeight(chromeHeight() + rows * table_->verticalHeader()->defaultSectionSize() +
                         (sideways ? table_->horizontalScrollBar()->sizeHint().height() : 0));
  emit rowsFitted(rows);
}

}  // namespace kvscope
