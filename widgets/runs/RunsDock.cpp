#include "widgets/runs/RunsDock.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

#include "core/run/MarkedRunSplitter.h"
#include "widgets/common/RunSession.h"
#include "widgets/common/ViewState.h"
#include "widgets/runs/MarkedRunTableModel.h"

namespace kvscope {

namespace {

QString parametersText(const RunMarked& start) {
  QStringList parts;
  for (const auto& [name, value] : start.parameters)
    parts << QString::fromStdString(name) + QLatin1Char('=') + QString::fromStdString(value);
  return parts.join(QStringLiteral(", "));
}

}  // namespace

void RunsDock::Feed::onEvent(const Event& e) { dock->onRunEvent(e); }

void RunsDock::OpenRunCounter::onEvent(const Event& e) {
  if (const auto* d = std::get_if<RequestDone>(&e.payload)) {
    ++requests;
    if (d->status != RequestStatus::Ok) ++failed;  // as the summary counts them
  }
}

RunsDock::RunsDock(QMainWindow& window, RunSession& session, ViewState& view, QMenu& view_menu)
    : QObject(&window),
      window_(window),
      session_(session),
      view_(view),
      dock_(new QDockWidget(tr("Runs"), &window)),
      model_(new MarkedRunTableModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView),
      status_(new QLabel),
      compare_(new QPushButton(tr("Compare against this run"))) {
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(MarkedRunTableModel::SortRole);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(MarkedRunTableModel::IndexColumn, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  table_->verticalHeader()->hide();
  // A sweep has tens of runs: fitting every column to its contents stays cheap and nothing wraps.
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);  // the diagnosis
  compare_->setToolTip(tr("Show every other run's metrics as a change against the selected run"));
  compare_->setEnabled(false);

  auto* panel = new QWidget;
  auto* top = new QHBoxLayout;
  top->addWidget(status_, 1);
  top->addWidget(compare_);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(table_);
  dock_->setObjectName("runsDock");  // QSettings restores the layout by object name
  dock_->setWidget(panel);
  window_.addDockWidget(Qt::BottomDockWidgetArea, dock_);
  if (auto* timeline = window_.findChild<QDockWidget*>("timelineDock")) window_.tabifyDockWidget(timeline, dock_);
  view_menu.addAction(dock_->toggleViewAction());

  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) { showSummary(index); });
  connect(table_, &QTableView::customContextMenuRequested, this, &RunsDock::showMenu);
  connect(compare_, &QPushButton::clicked, this, [this] { compareAgainst(table_->currentIndex()); });
  connect(table_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) { compare_->setEnabled(runAt(current) != nullptr); });
  feed_.dock = this;
  session_.addObserver(&feed_);
  connect(&session_, &RunSession::sourceChanged, this, &RunsDock::reset);
  connect(&session_, &RunSession::frame, this, &RunsDock::onFrame);
  reset();
}

RunsDock::~RunsDock() = default;

void RunsDock::reset() {
  MarkedRunSplitter::Hooks hooks;
  hooks.opened = [this](const RunMarked& start) -> EventSink* {
    counter_ = {};
    model_->openRun(start);
    return &counter_;
  };
  hooks.closed = [this](const MarkedRun& run) {
    open_since_.reset();
    model_->addRun(run);
  };
  splitter_ = std::make_unique<MarkedRunSplitter>(std::move(hooks));
  model_->clear();
  open_since_.reset();
  announced_ = false;
  dock_->hide();  // until this source's first marker: a simulation has none
  updateStatus();
}

void RunsDock::onRunEvent(const Event& e) {
  const auto* marker = std::get_if<RunMarked>(&e.payload);
  if (marker && !announced_) {
    announced_ = true;
    dock_->show();
    dock_->raise();  // on top of its tab group: the sweep has begun
  }
  splitter_->onEvent(e);
  // After the splitter: a start that ends the open run first closes it (clearing the time) then opens.
  if (marker && marker->action == RunMarkAction::Start) open_since_ = e.time;
}

void RunsDock::onFrame() {
  if (!announced_) return;  // nothing to show, and most sources never will
  if (open_since_) model_->setProgress({openElapsed(), counter_.requests, counter_.failed});
  updateStatus();
}

double RunsDock::openElapsed() const {
  if (!open_since_) return 0;
  const double elapsed = timeToSeconds(std::max<SimTime>(0, session_.store().now() - *open_since_));
  return std::floor(elapsed * 10) / 10;  // tenths: the row changes a few times a second, not every frame
}

QString RunsDock::statusText() const { return status_->text(); }

void RunsDock::updateStatus() {
  const int completed = model_->completedCount();
  const QString done = tr("%n completed", nullptr, completed);
  QString text;
  if (const RunMarked* open = model_->openStart()) {
    using Model = MarkedRunTableModel;
    text = tr("run %1 running for %2 · %3")
               .arg(Model::runLabel(*open), Model::formatValue(Model::Duration, openElapsed()), done);
  } else if (completed > 0) {
    text = tr("%1 · none running").arg(done);
  } else {
    text = tr("No run marked yet: a sweep script marks runs with kvscope-cli mark HOST:PORT --start NAME");
  }
  status_->setText(text);
  compare_->setEnabled(runAt(table_->currentIndex()) != nullptr);
}

const MarkedRun* RunsDock::runAt(const QModelIndex& index) const {
  if (!index.isValid()) return nullptr;
  return model_->completedRun(proxy_->mapToSource(index).row());
}

void RunsDock::compareAgainst(const QModelIndex& index) {
  const MarkedRun* run = runAt(index);
  model_->setBaseline(run ? std::optional<std::uint32_t>(run->start.index) : std::nullopt);
}

void RunsDock::showMenu(const QPoint& pos) {
  const QModelIndex index = table_->indexAt(pos);
  const MarkedRun* run = runAt(index);
  QMenu menu;
  menu.addAction(tr("Compare against this run"), this, [this, index] { compareAgainst(index); })
      ->setEnabled(run != nullptr);
  menu.addAction(tr("No baseline"), this, [this] { model_->setBaseline(std::nullopt); })
      ->setEnabled(model_->baseline().has_value());
  menu.addSeparator();
  menu.addAction(tr("Show summary..."), this, [this, index] { showSummary(index); })->setEnabled(run != nullptr);
  menu.exec(table_->viewport()->mapToGlobal(pos));
}

QDialog* RunsDock::showSummary(const QModelIndex& index) {
  const MarkedRun* run = runAt(index);
  if (!run) return nullptr;  // the open run has no summary yet
  // Its span everywhere: the charts and the timeline show what happened during the run.
  view_.selectWindow(run->session_start, run->session_end);
  auto* dialog = new QDialog(&window_);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(tr("Run %1").arg(MarkedRunTableModel::runLabel(run->start)));
  QString text = tr("Run %1").arg(MarkedRunTableModel::runLabel(run->start));
  if (!run->start.parameters.empty()) text += QStringLiteral(" (") + parametersText(run->start) + QLatin1Char(')');
  text += tr("\nSession time %1 s to %2 s; started by %3, ended by %4\n\n")
              .arg(timeToSeconds(run->session_start), 0, 'f', 1)
              .arg(timeToSeconds(run->session_end), 0, 'f', 1)
              .arg(QString::fromStdString(run->start.who), QString::fromStdString(run->ended_by));
  auto* view = new QPlainTextEdit(text + QString::fromStdString(run->summary.toTable()));
  view->setReadOnly(true);
  view->setLineWrapMode(QPlainTextEdit::NoWrap);
  view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  auto* layout = new QVBoxLayout(dialog);
  layout->addWidget(view);
  layout->addWidget(buttons);
  dialog->resize(760, 560);
  dialog->show();
  return dialog;
}

}  // namespace kvscope
