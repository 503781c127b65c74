#include "app/gui/PanelDocks.h"

#include <QAbstractItemView>

#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QHeaderView>
#include <QKeySequence>
#include <QTableView>

#include <QLayout>
#include <QMainWindow>
#include <QMenu>
#include <QResizeEvent>
#include <algorithm>

#include "app/gui/PanelRegistry.h"
#include "core/source/Source.h"
#include "core/telemetry/TelemetryStore.h"
#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/charts/KvPoolPanel.h"
#include "widgets/charts/LatencyPanel.h"
#include "widgets/charts/LinkHealthModel.h"
#include "widgets/charts/LinkHealthPanel.h"
#include "widgets/charts/TimeSeriesChart.h"
#include "widgets/charts/WorkerChartPanel.h"
#include "widgets/common/TableCopy.h"
#include "widgets/common/ViewState.h"
#include "widgets/diagnosis/DiagnosisPanel.h"
#include "widgets/knobs/KnobsPanel.h"
#include "widgets/knobs/WhatIfPanel.h"
#include "widgets/timeline/ReplayControlsPanel.h"

namespace kvscope {

PanelDocks::PanelDocks(QMainWindow& window, ViewState& view, QMenu& view_menu)
    : QObject(&window), window_(window), view_(view), view_menu_(view_menu) {
  createPanels();
  auto* diagnosis = panelOf<DiagnosisPanel>("diagnosis");
  auto* inspector = dockNamed("decisions");
  // Many workers lengthen the strip, and the side columns lose what it gains: past a point their
  // two panels each sit at their minimum (one knob in view), so the default layout tabs them.
  // A strip that shrank (fewer rows after a resize) would leave its dock's height empty below it.
  connect(decode_load_, &DecodeLoadPanel::rowsFitted, this, [this] {
    if (!default_layout_ || applying_) return;
    if (!arrangementHolds()) {
      applyDefaultLayout(ClosedDocks::Keep);
      return;
    }
    // The table's new height reaches the dock only through posted layout requests (the panel's,
    // then the dock's); sized before they ran, the dock could keep the old strip's minimum and
    // height, an empty band under a strip that lost rows.
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    fitStripAndTimeline();
  });
  window_.installEventFilter(this);
  refit_.setSingleShot(true);
  refit_.setInterval(150);
  connect(&refit_, &QTimer::timeout, this, &PanelDocks::refitToWindow);
  // A threshold dragged on a chart is a pending knob value, as if typed.
  connect(kv_pools_, &KvPoolPanel::knobDragged, knobs_,
          [this](const std::string& knob, double value) { knobs_->setPendingValue(knob, value); });
  connect(diagnosis, &DiagnosisPanel::subjectsSelected, &view_, &ViewState::highlightWorkers);
  // A worker picked in the strip, a note added or a run compared changes what the charts draw: every panel
  // refreshes next frame (even on a paused replay, whose store does not move).
  const auto redraw = [this] {
    for (Seen& s : seen_) s = Seen{};
  };
  connect(&view_, &ViewState::workersSelected, this, redraw);
  connect(&view_, &ViewState::notesChanged, this, redraw);
  connect(&view_, &ViewState::comparisonChanged, this, redraw);
  // A finding's knob fix: previewed as pending edits, or applied at once.
  auto setPending = [this](const std::map<std::string, double>& knobs) {
    for (const auto& [name, value] : knobs) knobs_->setPendingValue(name, value);
  };
  connect(diagnosis, &DiagnosisPanel::fixPreviewRequested, knobs_, setPending);
  // A finding's real fix, a routing policy, when its knob fix can no longer act.
  connect(diagnosis, &DiagnosisPanel::policyFixPreviewRequested, knobs_,
          [this](const std::string& policy) { knobs_->setPendingPolicy(policy); });
  connect(diagnosis, &DiagnosisPanel::policyFixApplyRequested, knobs_, [this](const std::string& policy) {
    if (knobs_->setPendingPolicy(policy)) knobs_->applyEdits();
  });
  // A fix can be previewed and applied only where the knobs can be set.
  auto allowFixes = [this, diagnosis] { diagnosis->setFixesAllowed(knobs_->editable(), knobs_->readOnlyReason()); };
  connect(knobs_, &KnobsPanel::editableChanged, diagnosis, allowFixes);
  allowFixes();
  connect(diagnosis, &DiagnosisPanel::fixApplyRequested, knobs_,
          [this, setPending](const std::map<std::string, double>& knobs) {
            setPending(knobs);
            knobs_->applyEdits();
          });
  // A request picked anywhere (timeline, table) shows its decision.
  connect(&view_, &ViewState::requestSelected, inspector, [inspector] { inspector->raise(); });
}

// Every panel of the registry in its dock (the central one in the middle), in the default layout;
// the layout counts as the operator's until the window is shown (MainWindow::showEvent).
void PanelDocks::createPanels() {
  for (const PanelSpec& spec : panelSpecs()) {
    TelemetryPanel* panel = spec.make(view_, &window_);
    if (spec.area == Qt::NoDockWidgetArea) {
      panel->setObjectName(QString::fromLatin1(spec.id));
      window_.setCentralWidget(panel);
      track(panel);
    } else {
      addDock(panel, spec);
    }
  }
  kv_pools_ = panelOf<KvPoolPanel>("kvPools");
  decode_load_ = panelOf<DecodeLoadPanel>("decodeLoad");
  knobs_ = panelOf<KnobsPanel>("knobs");
  links_ = panelOf<LinkHealthPanel>("linkHealth");
  latency_ = panelOf<LatencyPanel>("latency");
  what_if_ = panelOf<WhatIfPanel>("whatIf");
  replay_ = panelOf<ReplayControlsPanel>("replay");
  replay_dock_ = dockNamed("replay");
  // Every table of every panel copies (Ctrl+C) what is selected, or all of it.
  for (QAbstractItemView* table : window_.findChildren<QAbstractItemView*>()) enableTableCopy(*table);
  // The timeline spans the whole width (every second in view); so does the worker table, unless
  // the knobs reach up beside it (applyDefaultLayout sets the top-left corner).
  window_.setCorner(Qt::TopLeftCorner, Qt::TopDockWidgetArea);
  window_.setCorner(Qt::TopRightCorner, Qt::TopDockWidgetArea);
  window_.setCorner(Qt::BottomLeftCorner, Qt::BottomDockWidgetArea);
  window_.setCorner(Qt::BottomRightCorner, Qt::BottomDockWidgetArea);
  applyDefaultLayout();
  default_layout_ = false;
}

void PanelDocks::track(TelemetryPanel* panel) {
  const std::size_t i = panels_.size();
  panels_.push_back(panel);
  seen_.emplace_back();
  for (TimeSeriesChart* chart : panel->findChildren<TimeSeriesChart*>())
    connect(chart, &TimeSeriesChart::columnsStale, this, [this, i] { seen_[i].stale = true; });
}

// Below ~950 px (measured with a three-row worker strip) the side columns cannot stack two panels
// each at their minimum height; every further strip row takes its height from them.
bool PanelDocks::sideColumnsStack() const { return room().height() - stripRowsPastThree() >= 950; }

// The height of the strip's rows past its three: a 64-D strip is taller where the room lets it be.
int PanelDocks::stripRowsPastThree() const {
  return std::max(0, decode_load_->fittedRows() - 3) * decode_load_->table().verticalHeader()->defaultSectionSize();
}

// The side column's width at the window's width (the knobs and diagnosis; the links and latency
// take about as much on the right).
int PanelDocks::sideWidth() const { return std::clamp(room().width() * 27 / 100, 340, 500); }

// The knobs and the findings reach up beside the worker strip when every column of the strip
// still fits beside them: more knobs in view, where the strip would leave an empty band.
bool PanelDocks::knobsBesideStrip() const { return room().width() - sideWidth() >= decode_load_->widestTableWidth(); }

QSize PanelDocks::room() const { return room_.isValid() ? room_ : window_.size(); }

bool PanelDocks::arrangementHolds() const {
  return sideColumnsStack() == stacked_ && knobsBesideStrip() == knobs_beside_strip_ &&
         (full_min_height_ > room().height()) == strip_in_tabs_;
}

QDockWidget* PanelDocks::dockNamed(const char* object_name) const {
  return window_.findChild<QDockWidget*>(QString::fromLatin1(object_name) + "Dock");
}

void PanelDocks::windowResized() {
  if (default_layout_ && !applying_) refit_.start();
}

// The operator's new size is the room the layout has, but not a growth past it that the panels'
// minimum sizes forced (the layout made for the new size may need less): the size asked stands.
// Taken before the window's layout sees the resize: the strip refits its rows as it is laid out,
// and what that re-applies is for the new room.
bool PanelDocks::eventFilter(QObject* watched, QEvent* event) {
  if (watched == &window_ && event->type() == QEvent::Resize && default_layout_ && !applying_) {
    const QSize now = static_cast<QResizeEvent*>(event)->size(), min = window_.minimumSize();
    auto asked = [](int got, int least, int before) { return got > before && got == least ? before : got; };
    room_ = room_.isValid() ? QSize(asked(now.width(), min.width(), room_.width()),
                                    asked(now.height(), min.height(), room_.height()))
                            : now;
  }
  return QObject::eventFilter(watched, event);
}

void PanelDocks::refitToWindow() {
  if (!default_layout_ || applying_) return;
  // The strip's rows follow at the next frame, and rowsFitted fits the docks to them again (a
  // run of three workers keeps its three rows whatever the count allowed).
  fitStripRows();
  if (arrangementHolds()) {
    fitStripAndTimeline();
    return;
  }
  applyDefaultLayout(ClosedDocks::Keep);
}

// The worker strip gets a quarter of the window's height: on a laptop screen the timeline and the
// charts need what a 64-D strip's last rows would take. The rows follow at the next frame.
void PanelDocks::fitStripRows() {
  if (decode_load_->setManyWorkerRows(decode_load_->rowsFittingIn(room().height() / 4)))
    for (Seen& s : seen_) s = Seen{};
}

void PanelDocks::fitStripAndTimeline() {
  const QSize size = room();
  const int timeline = std::clamp(size.height() * 34 / 100, 160, 300);
  if (strip_in_tabs_)
    window_.resizeDocks({dockNamed("timeline")}, {timeline}, Qt::Vertical);
  else
    window_.resizeDocks({dockNamed("decodeLoad"), dockNamed("timeline")}, {decode_load_->sizeHint().height(), timeline},
                        Qt::Vertical);
  keepWindowSize(size);
}

// Re-docking and resizing docks ask for the docks' preferred sizes on the way, which can grow a
// window that no window manager holds (as at the start: MainWindow::showAtStart); the size it had wins.
void PanelDocks::keepWindowSize(QSize size) {
  if (window_.size() == size || window_.isMaximized() || window_.isFullScreen()) return;
  window_.layout()->activate();  // the minimum size the docks have now, not before they were resized
  window_.resize(size);
}

void PanelDocks::applyDefaultLayout(ClosedDocks closed) {
  applying_ = true;
  for (const Placed& p : placed_) {
    // A dock's View-menu action is unchecked while it is closed (not while a tab hides it).
    const bool open = closed == ClosedDocks::Reopen || p.dock->toggleViewAction()->isChecked();
    p.dock->setFloating(false);
    window_.addDockWidget(p.area, p.dock);  // back where it belongs, in creation order
    p.dock->setVisible(open && (p.dock != replay_dock_ || (source_ && source_->capabilities().seek)));
  }
  QDockWidget* knobs = dockNamed("knobs");
  QDockWidget* diagnosis = dockNamed("diagnosis");
  QDockWidget* links = dockNamed("linkHealth");
  QDockWidget* latency = dockNamed("latency");
  QDockWidget* what_if = dockNamed("whatIf");
  QDockWidget* timeline = dockNamed("timeline");
  window_.splitDockWidget(replay_dock_, timeline, Qt::Vertical);  // a slim bar above the timeline
  // The decision inspector, the lab's metrics and the like behind the timeline (their specs'
  // tab_with): wide figures, and a tab bar that is there already.
  for (const PanelSpec& spec : panelSpecs())
    if (*spec.tab_with) window_.tabifyDockWidget(dockNamed(spec.tab_with), dockNamed(spec.id));
  timeline->raise();
  fitStripRows();
  const QSize size = room();
  knobs_beside_strip_ = knobsBesideStrip();
  window_.setCorner(Qt::TopLeftCorner, knobs_beside_strip_ ? Qt::LeftDockWidgetArea : Qt::TopDockWidgetArea);
  // Tabs where they cannot stack (the diagnosis and the links in front: they say what is wrong).
  stacked_ = sideColumnsStack();
  if (!stacked_) {
    window_.tabifyDockWidget(knobs, diagnosis);
    diagnosis->raise();
    window_.tabifyDockWidget(links, latency);
    links->raise();
  } else {
    window_.splitDockWidget(knobs, diagnosis, Qt::Vertical);
    window_.splitDockWidget(links, latency, Qt::Vertical);
    // The knobs a little taller (four or five in view at 1600x1000 and 1920x1080; the filter finds
    // the rest); the findings keep room for three and their evidence: a finding hidden below the
    // fold is one nobody reads.
    window_.resizeDocks({knobs, diagnosis}, knobs_beside_strip_ ? QList<int>{2, 1} : QList<int>{3, 2}, Qt::Vertical);
  }
  // The what-if numbers behind the links until a preview brings them to the front.
  window_.tabifyDockWidget(links, what_if);
  links->raise();
  window_.resizeDocks({knobs, links}, {sideWidth(), std::clamp(size.width() * 26 / 100, 320, 520)}, Qt::Horizontal);
  // Too short for the strip above the charts and the timeline below them (2x scaling on a 1080p
  // screen leaves 540 px): the strip joins the timeline's tabs, in front.
  // Measured with the strip's rows counted as its fewest, three (their number follows the room,
  // and changes a frame later: fitStripRows).
  window_.layout()->invalidate();
  full_min_height_ = window_.layout()->minimumSize().height() - stripRowsPastThree();
  strip_in_tabs_ = full_min_height_ > room().height();
  if (strip_in_tabs_) {
    QDockWidget* strip = dockNamed("decodeLoad");
    window_.addDockWidget(Qt::BottomDockWidgetArea, strip);
    window_.tabifyDockWidget(timeline, strip);
    strip->raise();
  }
  fitStripAndTimeline();
  if (stacked_)
    window_.resizeDocks({links, latency}, {links->widget()->minimumSizeHint().height() + 90, 420}, Qt::Vertical);
  // The window's minimum size is the new layout's before any resize; laid out, the strip may have
  // refitted its rows (scrolling sideways or not), which its dock follows.
  window_.layout()->activate();
  fitStripAndTimeline();
  keepWindowSize(size);
  applying_ = false;
  default_layout_ = true;
}

QDockWidget* PanelDocks::addDock(TelemetryPanel* panel, const PanelSpec& spec) {
  const QString id = QString::fromLatin1(spec.id);
  auto* dock = new QDockWidget(QCoreApplication::translate("PanelDocks", spec.title), &window_);
  dock->setObjectName(id + "Dock");  // QSettings restores the layout by object name
  panel->setObjectName(id);
  dock->setWidget(panel);
  window_.addDockWidget(spec.area, dock);
  auto moved = [this] { default_layout_ = default_layout_ && applying_; };  // the operator's arrangement from now on
  connect(dock, &QDockWidget::dockLocationChanged, this, moved);
  connect(dock, &QDockWidget::topLevelChanged, this, moved);
  QAction* toggle = dock->toggleViewAction();
  if (*spec.shortcut) toggle->setShortcut(QKeySequence(QString::fromLatin1(spec.shortcut)));
  view_menu_.addAction(toggle);
  placed_.push_back({dock, spec.area});
  track(panel);
  return dock;
}

TelemetryPanel* PanelDocks::panel(const QString& object_name) const {
  for (TelemetryPanel* p : panels_)
    if (p->objectName() == object_name) return p;
  return nullptr;
}

void PanelDocks::setSource(Source* source) {
  source_ = source;
  knobs_->setSource(source);
  replay_->setSource(source);
  // Replay controls only where they work: a recording.
  replay_dock_->setVisible(source && source->capabilities().seek);
  for (Seen& s : seen_) s = Seen{};
}

void PanelDocks::refresh(const TelemetryStore& store, bool force) {
  // Health comes from the source's status, as the status bar's does (a live session asks its scrapers; a remote
  // source keeps what WorkerHealthChanged events said).
  const std::map<std::string, std::string> health =
      source_ ? source_->status().worker_health : std::map<std::string, std::string>{};
  decode_load_->model().setWorkerHealth(health);
  links_->model().setWorkerHealth(health);
  for (std::size_t i = 0; i < panels_.size(); ++i) {
    TelemetryPanel* p = panels_[i];
    Seen& seen = seen_[i];
    const bool visible = p->isVisible() && !p->visibleRegion().isEmpty();
    const bool moved = seen.revision != store.revision() || seen.from != view_.from() || seen.to != view_.to() ||
                       (visible && !seen.visible) || seen.size != p->size() || seen.stale;
    // A rate-limited panel still refreshes at once for a new run, the run's end, or on showing.
    const int every = p->refreshIntervalMs();
    const bool due = every <= 0 || !seen.since.isValid() || seen.since.elapsed() >= every ||
                     seen.run_id != store.runId() || store.finished() || (visible && !seen.visible);
    seen.visible = visible;
    if (!force && (!visible || !moved || !due)) continue;
    seen.stale = false;  // (set again if a chart finds its columns stale during this refresh)
    if (force)
      p->refreshNow(store);
    else
      p->refresh(store);
    seen.revision = store.revision();
    seen.run_id = store.runId();
    seen.from = view_.from();
    seen.to = view_.to();
    seen.size = p->size();
    seen.since.start();
  }
}

void PanelDocks::raisePanel(const char* id) {
  if (QDockWidget* dock = dockNamed(id)) {
    dock->show();
    dock->raise();
  }
}

void PanelDocks::setPreview(const WhatIfResult* preview) {
  for (TelemetryPanel* panel : panels_)
    if (auto* charts = qobject_cast<WorkerChartPanel*>(panel)) charts->setPreview(preview);
  latency_->setPreview(preview);
}

}  // namespace kvscope
