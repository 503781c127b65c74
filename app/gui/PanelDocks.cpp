#include "gui/PanelDocks.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>

#include "DecisionInspectorPanel.h"
#include "DecodeLoadModel.h"
#include "DecodeLoadPanel.h"
#include "DiagnosisPanel.h"
#include "EventTimelinePanel.h"
#include "KnobsPanel.h"
#include "KvPoolPanel.h"
#include "LatencyPanel.h"
#include "LinkHealthPanel.h"
#include "ReplayControlsPanel.h"
#include "ViewState.h"
#include "source/Source.h"
#include "telemetry/TelemetryStore.h"

namespace kvscope {

PanelDocks::PanelDocks(QMainWindow& window, ViewState& view, QMenu& view_menu)
    : QObject(&window), window_(window), view_(view), view_menu_(view_menu) {
  kv_pools_ = new KvPoolPanel(view_, &window_);
  kv_pools_->setObjectName("kvPools");
  window_.setCentralWidget(kv_pools_);
  panels_.push_back(kv_pools_);
  seen_.emplace_back();

  // The default layout for 1600x1000; a user's own is restored over it from QSettings.
  decode_load_ = new DecodeLoadPanel(view_, &window_);
  QDockWidget* load = addDock(decode_load_, tr("Decode load"), "decodeLoad", Qt::TopDockWidgetArea);
  knobs_ = new KnobsPanel(view_, &window_);
  QDockWidget* knobs = addDock(knobs_, tr("Knobs"), "knobs", Qt::LeftDockWidgetArea);
  QDockWidget* diagnosis = addDock(new DiagnosisPanel(view_, &window_), tr("Diagnosis"), "diagnosis", Qt::LeftDockWidgetArea);
  QDockWidget* links = addDock(new LinkHealthPanel(view_, &window_), tr("Mooncake links"), "linkHealth", Qt::RightDockWidgetArea);
  QDockWidget* latency = addDock(new LatencyPanel(view_, &window_), tr("Latency and failures"), "latency", Qt::RightDockWidgetArea);
  replay_ = new ReplayControlsPanel(view_, &window_);
  replay_dock_ = addDock(replay_, tr("Replay"), "replay", Qt::BottomDockWidgetArea);
  QDockWidget* timeline = addDock(new EventTimelinePanel(view_, &window_), tr("Event timeline"), "timeline", Qt::BottomDockWidgetArea);
  QDockWidget* inspector = addDock(new DecisionInspectorPanel(view_, &window_), tr("Decision inspector"), "decisions", Qt::BottomDockWidgetArea);
  window_.tabifyDockWidget(timeline, inspector);
  window_.splitDockWidget(replay_dock_, timeline, Qt::Vertical);  // a slim bar above the timeline
  timeline->raise();
  window_.splitDockWidget(knobs, diagnosis, Qt::Vertical);
  window_.splitDockWidget(links, latency, Qt::Vertical);
  window_.resizeDocks({knobs, links}, {360, 400}, Qt::Horizontal);
  window_.resizeDocks({load, timeline}, {150, 300}, Qt::Vertical);
  replay_dock_->hide();
  // A request picked anywhere (timeline, table) shows its decision.
  connect(&view_, &ViewState::requestSelected, inspector, [inspector] { inspector->raise(); });
}

QDockWidget* PanelDocks::addDock(TelemetryPanel* panel, const QString& title, const QString& object_name,
                                 Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, &window_);
  dock->setObjectName(object_name + "Dock");  // QSettings restores the layout by object name
  panel->setObjectName(object_name);
  dock->setWidget(panel);
  window_.addDockWidget(area, dock);
  view_menu_.addAction(dock->toggleViewAction());
  panels_.push_back(panel);
  seen_.emplace_back();
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
  decode_load_->model().setWorkerHealth(source_ ? source_->status().worker_health : std::map<std::string, std::string>{});
  for (std::size_t i = 0; i < panels_.size(); ++i) {
    TelemetryPanel* p = panels_[i];
    Seen& seen = seen_[i];
    const bool visible = p->isVisible() && !p->visibleRegion().isEmpty();
    const bool moved = seen.revision != store.revision() || seen.from != view_.from() || seen.to != view_.to() ||
                       (visible && !seen.visible);
    seen.visible = visible;
    if (!force && (!visible || !moved)) continue;
    p->refresh(store);
    seen = {store.revision(), view_.from(), view_.to(), visible};
  }
}

}  // namespace kvscope
