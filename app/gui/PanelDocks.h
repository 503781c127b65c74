#pragma once
// Creates the console's panels as dock widgets from the registry (PanelRegistry.h; the layout is
// saved with QSettings by the main window) and refreshes the visible ones on each frame, only when
// the store or the shared view moved.
#include <QElapsedTimer>
#include <QObject>
#include <QSize>
#include <QTimer>

#include <cstdint>
#include <vector>

#include "core/model/Ids.h"

class QDockWidget;
class QMainWindow;
class QMenu;

namespace kvscope {

class TelemetryPanel;
class TelemetryStore;
class ViewState;
class Source;
class KnobsPanel;
class KvPoolPanel;
class DecodeLoadPanel;
class LatencyPanel;
class LinkHealthPanel;
class ReplayControlsPanel;
class WhatIfPanel;
struct PanelSpec;
struct WhatIfResult;

class PanelDocks : public QObject {
  Q_OBJECT
 public:
  PanelDocks(QMainWindow& window, ViewState& view, QMenu& view_menu);

  // The default layout for the window's current size: every panel docked where it belongs, none
  // below its minimum size at 1280x800 and up (View > Reset layout; the first start). Re-applied
  // for a new size or a longer strip, it keeps the panels the operator closed closed.
  enum class ClosedDocks { Reopen, Keep };
  void applyDefaultLayout(ClosedDocks closed = ClosedDocks::Reopen);
  // The window was resized (MainWindow::resizeEvent). While the default layout is in place, the
  // worker strip is refitted to a quarter of the new height once the resize settles, and the side
  // columns stack or tab for it; a layout the operator arranged or restored stays as it is.
  void windowResized();
  // The room the window has (the size it asked for: the screen's, or a screenshot's): a layout
  // whose panels need more height than that tabs the worker strip with the timeline.
  void setRoom(QSize room) { room_ = room; }

  void refresh(const TelemetryStore& store, bool force = false);
  void setSource(Source* source);

  KvPoolPanel& kvPools() const { return *kv_pools_; }
  KnobsPanel& knobs() const { return *knobs_; }
  ReplayControlsPanel& replay() const { return *replay_; }
  DecodeLoadPanel& decodeLoad() const { return *decode_load_; }
  LatencyPanel& latency() const { return *latency_; }
  WhatIfPanel& whatIf() const { return *what_if_; }
  // Brings the what-if dock to the front (a preview is on its way).
  void raiseWhatIf() { raisePanel("whatIf"); }
  // Shows panel `id` (PanelRegistry) and brings its dock to the front of its tabs.
  void raisePanel(const char* id);
  // Draws a what-if preview's futures on every chart that shows them (null: none).
  void setPreview(const WhatIfResult* preview);
  const std::vector<TelemetryPanel*>& panels() const { return panels_; }
  TelemetryPanel* panel(const QString& object_name) const;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void createPanels();
  QDockWidget* addDock(TelemetryPanel* panel, const PanelSpec& spec);
  // The registry's panel `id` as the class it is (PanelRegistry.cpp made it).
  template <class Panel>
  Panel* panelOf(const char* id) const {
    auto* p = qobject_cast<Panel*>(panel(QString::fromLatin1(id)));
    Q_ASSERT(p);
    return p;
  }
  bool sideColumnsStack() const;
  int stripRowsPastThree() const;
  int sideWidth() const;
  bool knobsBesideStrip() const;
  QSize room() const;             // see setRoom; the window's size until it is set
  bool arrangementHolds() const;  // the default layout in place is the one the window's size calls for
  QDockWidget* dockNamed(const char* object_name) const;
  void refitToWindow();
  void fitStripRows();  // the strip's row count for the window's height
  // The strip as tall as its rows and the timeline at its default height (the rest goes to the
  // charts): what applyDefaultLayout gives them, again after the strip's rows changed.
  void fitStripAndTimeline();
  void keepWindowSize(QSize size);
  void track(TelemetryPanel* panel);

  QMainWindow& window_;
  ViewState& view_;
  QMenu& view_menu_;
  KvPoolPanel* kv_pools_ = nullptr;
  DecodeLoadPanel* decode_load_ = nullptr;
  LinkHealthPanel* links_ = nullptr;
  LatencyPanel* latency_ = nullptr;
  WhatIfPanel* what_if_ = nullptr;
  KnobsPanel* knobs_ = nullptr;
  ReplayControlsPanel* replay_ = nullptr;
  Source* source_ = nullptr;  // for its workers' health (a live cluster's), read each frame
  QDockWidget* replay_dock_ = nullptr;
  struct Placed {
    QDockWidget* dock;
    Qt::DockWidgetArea area;
  };
  std::vector<Placed> placed_;  // each dock with its default area, in creation order
  // The default layout is in place and nobody has moved a dock since: a worker strip that grows
  // (a 64-D run) may re-apply it, tabbing the side columns. A restored or rearranged layout stays.
  bool default_layout_ = false;
  bool applying_ = false;
  bool stacked_ = true;              // the side columns' panels one above the other (else tabbed)
  bool knobs_beside_strip_ = false;  // the left column reaches the top (else the strip spans the width)
  bool strip_in_tabs_ = false;       // the strip is a tab beside the timeline (a short screen)
  int full_min_height_ = 0;          // the window's minimum height with a 3-row strip above the charts
  QSize room_;                       // see setRoom
  QTimer refit_;                     // single shot: a drag-resize sends dozens of sizes, the layout follows the last
  std::vector<TelemetryPanel*> panels_;
  struct Seen {
    std::uint64_t revision = ~0ull, run_id = ~0ull;
    SimTime from = -1, to = -1;
    bool visible = false;
    QSize size;           // a resized chart recomputes its columns for the new width
    bool stale = false;   // a chart of the panel asked for its data again (TimeSeriesChart::columnsStale)
    QElapsedTimer since;  // the panel's last refresh, for TelemetryPanel::refreshIntervalMs()
  };
  std::vector<Seen> seen_;
};

}  // namespace kvscope
