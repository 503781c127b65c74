#include "widgets/diagnosis/DiagnosisPanel.h"

#include <algorithm>
#include <cstdio>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include "core/telemetry/TelemetryStore.h"
#include "widgets/common/ViewState.h"
#include "widgets/diagnosis/FindingsModel.h"

namespace kvscope {

DiagnosisPanel::DiagnosisPanel(ViewState& view, QWidget* parent) : TelemetryPanel(view, parent) {
  model_ = new FindingsModel(this);

  empty_ = new QLabel(this);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setTextFormat(Qt::RichText);
  empty_->setText(
      tr("<p><b>No failure mode detected so far</b></p>"
         "<p>The console watches for the lab's modes as the run goes: A (Mooncake cascade), "
         "B (cold decode worker), C (evict storm), C' (reseed storm), D (streaming-session crash).</p>"));

  buildFindingsTable();
  QWidget* details_box = buildDetails();
  // A run shows a handful of findings at most: the list gets what its rows need (fitRows), the
  // evidence the rest, until the operator moves the divider.
  split_ = new QSplitter(Qt::Vertical, this);
  split_->addWidget(table_);
  split_->addWidget(details_box);
  split_->setStretchFactor(0, 1);
  split_->setStretchFactor(1, 1);
  split_->setSizes({200, 200});
  split_->setChildrenCollapsible(false);
  connect(split_, &QSplitter::splitterMoved, this, [this] { split_by_hand_ = true; });
  // The failure mode's width decides its wrapping, hence the rows' heights: refit when it changes.
  connect(table_->horizontalHeader(), &QHeaderView::sectionResized, this, [this] { fitRows(); });

  pages_ = new QStackedWidget(this);
  pages_->addWidget(empty_);
  pages_->addWidget(split_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(pages_);

  followModel();
}

// The findings, one row each: the mode and its window; evidence and suggestion are spelled out for
// the selected one below the table (buildDetails).
void DiagnosisPanel::buildFindingsTable() {
  table_ = new QTableView(this);
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideRight);
  table_->verticalHeader()->hide();
  QHeaderView* header = table_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  // Mode and window are measured each time the findings change (fitColumns): ResizeToContents
  // re-measures only on a later layout pass, and a screenshot taken before it showed "C - ...".
  header->setSectionResizeMode(FindingsModel::Name, QHeaderView::Stretch);
  // Evidence and suggestion are long: spelled out for the selected finding below, not squeezed here.
  table_->setColumnHidden(FindingsModel::Evidence, true);
  table_->setColumnHidden(FindingsModel::Suggestion, true);
  // A narrow dock wraps a long failure mode ("Evict storm (session-level eviction)") onto a second
  // line of its row rather than cutting it.
  table_->setWordWrap(true);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // A finding kept as a note on the recording: at its window's start, named with its subjects.
  table_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(table_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
    const Finding* f = model_->finding(table_->indexAt(pos).row());
    if (!f) return;
    QMenu menu(table_);
    menu.addAction(tr("Add as a note on the run"), this, [this, f] { emit noteRequested(noteOf(*f)); });
    menu.exec(table_->viewport()->mapToGlobal(pos));
  });
}

RunNote DiagnosisPanel::noteOf(const Finding& f) {
  std::string text = f.mode + " - " + f.name;
  if (!f.subjects.empty()) text += " (" + f.subjectsText() + ")";
  char window[64];
  std::snprintf(window, sizeof window, ", %.1f - %.1f s", f.window_start_s, f.window_end_s);
  text += window;
  if (f.resolved) text += ", resolved";
  return {secondsToTime(f.window_start_s), text};
}

// The selected finding in full, with the buttons that preview or apply its knob fix.
QWidget* DiagnosisPanel::buildDetails() {
  // The table elides; the selected finding is spelled out in full below it.
  details_ = new QLabel(this);
  details_->setWordWrap(true);
  details_->setTextFormat(Qt::RichText);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  details_->setMargin(6);

  auto* details_scroll = new QScrollArea(this);
  details_scroll->setWidget(details_);
  details_scroll->setWidgetResizable(true);
  details_scroll->setFrameShape(QFrame::NoFrame);

  // A finding whose mitigation is a knob can be tried (preview) or applied from here.
  preview_fix_ = new QPushButton(tr("Preview fix"), this);
  preview_fix_->setObjectName(QStringLiteral("previewFix"));
  preview_fix_->setToolTip(
      tr("Load the suggested knob values as pending edits: the knobs panel previews the next minutes with them"));
  apply_fix_ = new QPushButton(tr("Apply fix"), this);
  apply_fix_->setObjectName(QStringLiteral("applyFix"));
  apply_fix_->setToolTip(tr("Send the suggested knob values to the run now"));
  connect(preview_fix_, &QPushButton::clicked, this, &DiagnosisPanel::previewSelectedFix);
  connect(apply_fix_, &QPushButton::clicked, this, &DiagnosisPanel::applySelectedFix);
  auto* details_box = new QWidget(this);
  auto* details_layout = new QVBoxLayout(details_box);
  details_layout->setContentsMargins(0, 0, 0, 0);
  details_layout->addWidget(details_scroll, 1);
  auto* fix_buttons = new QHBoxLayout;
  fix_buttons->addStretch(1);
  fix_buttons->addWidget(preview_fix_);
  fix_buttons->addWidget(apply_fix_);
  details_layout->addLayout(fix_buttons);

  return details_box;
}

// The recompute timer, the table's selection, and the page and columns as the findings change.
void DiagnosisPanel::followModel() {
  deferred_.setSingleShot(true);
  deferred_.setTimerType(Qt::PreciseTimer);  // a coarse timer may fire early, breaking "at most once a second"
  connect(&deferred_, &QTimer::timeout, this, &DiagnosisPanel::recompute);
  // Clicking (or Enter on) a finding shows its window even when it is already the current row.
  connect(table_, &QTableView::clicked, this, &DiagnosisPanel::selectFinding);
  connect(table_, &QTableView::activated, this, &DiagnosisPanel::selectFinding);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showDetails(current.row()); });
  // A finding deselected (Ctrl+click, Esc, or gone from the list) gives the charts back their
  // colours: no worker stays faded for a finding nobody is looking at.
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    if (!table_->selectionModel()->hasSelection()) emit subjectsSelected({});
  });
  table_->installEventFilter(this);
  // The page follows the model, whoever set its findings.
  const auto showPage = [this] { pages_->setCurrentIndex(model_->rowCount() == 0 ? 0 : 1); };
  connect(model_, &QAbstractItemModel::modelReset, this, [this, showPage] {
    showPage();
    fitColumns();
    showDetails(table_->currentIndex().row());
  });
  connect(model_, &QAbstractItemModel::dataChanged, this, [this] {
    fitColumns();
    showDetails(table_->currentIndex().row());
  });
  connect(model_, &QAbstractItemModel::rowsInserted, this, [this, showPage] {
    showPage();
    fitColumns();
  });
}

void DiagnosisPanel::refresh(const TelemetryStore& store) {
  store_ = &store;
  if (computed_ && *computed_ == StoreMark{&store, store.revision(), store.now()}) return;
  if (!since_recompute_.isValid() || since_recompute_.elapsed() >= kRecomputeIntervalMs) {
    recompute();
  } else if (!deferred_.isActive()) {
    deferred_.start(static_cast<int>(kRecomputeIntervalMs - since_recompute_.elapsed()));
  }
}

void DiagnosisPanel::refreshNow(const TelemetryStore& store) {
  store_ = &store;
  recompute();
}

void DiagnosisPanel::recompute() {
  deferred_.stop();
  if (!store_) return;
  since_recompute_.start();
  computed_ = StoreMark{store_, store_->revision(), store_->now()};
  ++recomputations_;
  model_->setFindings(store_->findings());
  const bool starting = store_->newSessionsSince(store_->now() - secondsToTime(kNewSessionsWindowS)) > 0;
  last_new_session_ = store_->lastNewSession();
  if (starting != sessions_starting_) {
    sessions_starting_ = starting;
    showDetails(table_->currentIndex().row());  // the fix offered may have changed
  } else if (model_->rowCount() > 0 && !table_->currentIndex().isValid()) {
    showDetails(-1);
  }
}

// Every row's text, not only the rows in view (which is all Qt's own measuring looks at): a
// finding below the fold of a short table still fits once scrolled to.
void DiagnosisPanel::fitColumns() {
  if (fitting_) return;  // (naming fewer subjects changes the model, which asks for a fit again)
  fitting_ = true;
  const QFontMetrics fm = table_->fontMetrics();
  const int margin = 2 * table_->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table_) + 8;
  // A column's widest text over every finding, and its header.
  auto widest = [&](int column, auto&& textOf) {
    int width = table_->horizontalHeader()->sectionSizeHint(column);
    for (const Finding& f : model_->findings()) width = std::max(width, fm.horizontalAdvance(textOf(f)) + margin);
    return width;
  };
  const int window = widest(FindingsModel::Window, [](const Finding& f) { return FindingsModel::windowText(f); });
  // The failure mode wraps, but not inside a word: it keeps room for its longest word (and its
  // header). Where the dock is too narrow for that, the mode cells name fewer subjects.
  int name = table_->horizontalHeader()->sectionSizeHint(FindingsModel::Name);
  for (const Finding& f : model_->findings())
    for (const QString& word : QString::fromStdString(f.name).split(QLatin1Char(' ')))
      name = std::max(name, fm.horizontalAdvance(word) + margin);
  auto modeWidth = [&](int named) {
    return widest(FindingsModel::Mode,
                  [named](const Finding& f) { return FindingsModel::modeText(f, static_cast<std::size_t>(named)); });
  };
  int named = 3;
  int mode = modeWidth(named);
  while (named > 1 && mode + window + name > table_->viewport()->width()) mode = modeWidth(--named);
  model_->setNamedSubjects(named);
  table_->setColumnWidth(FindingsModel::Mode, mode);
  table_->setColumnWidth(FindingsModel::Window, window);
  fitting_ = false;
  fitRows();
}

void DiagnosisPanel::fitRows() {
  if (split_by_hand_ || model_->rowCount() == 0) return;
  // What the table draws besides its rows (header, frame), as laid out when it has been.
  int rows = table_->isVisible() ? table_->height() - table_->viewport()->height()
                                 : table_->horizontalHeader()->sizeHint().height() + 2 * table_->frameWidth();
  table_->resizeRowsToContents();
  for (int row = 0; row < model_->rowCount(); ++row) rows += table_->rowHeight(row);
  const int total = split_->height() - split_->handleWidth();  // setSizes shares out what the handle leaves
  // The evidence keeps room for three lines and the fix buttons; a list too long for that still gets half.
  const int details_min = 3 * details_->fontMetrics().lineSpacing() + preview_fix_->sizeHint().height() + 12;
  const int list = std::min(rows, std::max(total - details_min, total / 2));
  split_->setSizes({list, total - list});
}

bool DiagnosisPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_ && event->type() == QEvent::KeyPress &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape && table_->selectionModel()->hasSelection()) {
    table_->clearSelection();
    return true;
  }
  return TelemetryPanel::eventFilter(watched, event);
}

void DiagnosisPanel::resizeEvent(QResizeEvent* event) {
  TelemetryPanel::resizeEvent(event);
  fitColumns();
}

void DiagnosisPanel::selectFinding(const QModelIndex& index) {
  const Finding* f = model_->finding(index.row());
  // (A Ctrl+click that deselected the row is a click too: it selects nothing.)
  if (!f || !table_->selectionModel()->isRowSelected(index.row(), {})) return;
  view().selectWindow(secondsToTime(f->window_start_s), secondsToTime(f->window_end_s));
  QStringList subjects;
  for (const std::string& s : f->subjects) subjects << QString::fromStdString(s);
  emit subjectsSelected(subjects);
}

void DiagnosisPanel::previewSelectedFix() {
  if (!preview_fix_->isEnabled()) return;
  const Finding* f = model_->finding(table_->currentIndex().row());
  if (!f) return;
  if (const std::string policy = policyInstead(*f); !policy.empty())
    emit policyFixPreviewRequested(policy);
  else if (!f->fix_knobs.empty())
    emit fixPreviewRequested(f->fix_knobs);
}

void DiagnosisPanel::applySelectedFix() {
  if (!apply_fix_->isEnabled()) return;
  const Finding* f = model_->finding(table_->currentIndex().row());
  if (!f) return;
  if (const std::string policy = policyInstead(*f); !policy.empty())
    emit policyFixApplyRequested(policy);
  else if (!f->fix_knobs.empty())
    emit fixApplyRequested(f->fix_knobs);
}

std::string DiagnosisPanel::policyInstead(const Finding& f) const {
  return f.fix_needs_new_sessions && !sessions_starting_ ? f.fix_policy : std::string();
}

void DiagnosisPanel::setFixesAllowed(bool allowed, const QString& why_not) {
  fixes_allowed_ = allowed;
  fixes_why_not_ = why_not;
  showDetails(table_->currentIndex().row());
}

void DiagnosisPanel::showDetails(int row) {
  const Finding* f = model_->finding(row);
  showFixButtons(f);
  if (!f) {
    details_->setText(tr("<i>Click a finding to see its evidence in full and show its window on every chart.</i>"));
    return;
  }
  auto html = [](const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); };
  QString text = tr("<p><b>%1 &mdash; %2</b> &nbsp; %3</p><p><b>Evidence:</b> %4</p><p><b>Suggested fix:</b> %5</p>")
                     .arg(html(f->mode), html(f->name), FindingsModel::windowText(*f).toHtmlEscaped(),
                          html(f->evidence), html(f->suggestion));
  if (const std::string policy = policyInstead(*f); !policy.empty() && !f->resolved)
    text += tr("<p><b>Now:</b> %1 The fix buttons offer the real fix instead: the %2 policy.</p>")
                .arg(noNewSessionsText().toHtmlEscaped(), html(policy));
  details_->setText(text);
}

// K and the other scores move only sessions that start after them.
QString DiagnosisPanel::noNewSessionsText() const {
  return last_new_session_ ? tr("The knob fix moves only new sessions, and none has started since %1 s.")
                                 .arg(timeToSeconds(*last_new_session_), 0, 'f', 1)
                           : tr("The knob fix moves only new sessions, and none has started.");
}

void DiagnosisPanel::showFixButtons(const Finding* f) {
  const std::string policy = f ? policyInstead(*f) : std::string();
  const bool fix = f && (!f->fix_knobs.empty() || !policy.empty());
  const bool usable = fix && fixes_allowed_ && !f->resolved;
  preview_fix_->setEnabled(usable);
  apply_fix_->setEnabled(usable);
  preview_fix_->setText(policy.empty() ? tr("Preview fix") : tr("Preview policy fix"));
  apply_fix_->setText(policy.empty() ? tr("Apply fix") : tr("Apply policy fix"));
  if (fix && !usable) {  // say why the buttons are off: a disabled button that does not is a riddle
    const QString why = !fixes_allowed_
                            ? (fixes_why_not_.isEmpty() ? tr("This run takes no knob changes.") : fixes_why_not_)
                            : tr("This finding no longer holds: its fix would change nothing now.");
    preview_fix_->setToolTip(why);
    apply_fix_->setToolTip(why);
  } else if (!policy.empty()) {
    const QString name = QString::fromStdString(policy);
    preview_fix_->setToolTip(tr("%1 Pick the %2 policy as a pending change and preview the next minutes with it")
                                 .arg(noNewSessionsText(), name));
    apply_fix_->setToolTip(tr("Switch the run to the %1 policy now").arg(name));
  } else if (fix) {
    QStringList values;
    for (const auto& [name, value] : f->fix_knobs)
      values << QStringLiteral("%1=%2").arg(QString::fromStdString(name)).arg(value);
    preview_fix_->setToolTip(
        tr("Load %1 as pending edits and preview the next minutes with them").arg(values.join(", ")));
    apply_fix_->setToolTip(tr("Send %1 to the run now").arg(values.join(", ")));
  }
}

bool DiagnosisPanel::showsEmptyState() const { return pages_->currentWidget() == empty_; }

QString DiagnosisPanel::emptyStateText() const { return empty_->text(); }

QString DiagnosisPanel::detailsText() const { return details_->text(); }

}  // namespace kvscope
