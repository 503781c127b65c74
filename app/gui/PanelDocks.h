#pragma once
// Creates the console's panels as dock widgets (layout saved with QSettings by the main window)
// and refreshes the visible ones on each frame, only when the store or the shared view moved.
#include <QObject>

#include <cstdint>
#include <vector>

#include "model/Ids.h"

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
class ReplayControlsPanel;

class PanelDocks : public QObject {
  Q_OBJECT
 public:
  PanelDocks(QMainWindow& window, ViewState& view, QMenu& view_menu);

  void refresh(const TelemetryStore& store, bool force = false);
  void setSource(Source* source);

  KvPoolPanel& kvPools() const { return *kv_pools_; }
  KnobsPanel& knobs() const { return *knobs_; }
  ReplayControlsPanel& replay() const { return *replay_; }
  DecodeLoadPanel& decodeLoad() const { return *decode_load_; }
  const std::vector<TelemetryPanel*>& panels() const { return panels_; }
  TelemetryPanel* panel(const QString& object_name) const;

 private:
  QDockWidget* addDock(TelemetryPanel* panel, const QString& title, const QString& object_name, Qt::DockWidgetArea area);

  QMainWindow& window_;
  ViewState& view_;
  QMenu& view_menu_;
  KvPoolPanel* kv_pools_ = nullptr;
  DecodeLoadPanel* decode_load_ = nullptr;
  KnobsPanel* knobs_ = nullptr;
  ReplayControlsPanel* replay_ = nullptr;
  Source* source_ = nullptr;  // for its workers' health (a live cluster's), read each frame
  QDockWidget* replay_dock_ = nullptr;
  std::vector<TelemetryPanel*> panels_;
  struct Seen {
    std::uint64_t revision = ~0ull;
    SimTime from = -1, to = -1;
    bool visible = false;
  };
  std::vector<Seen> seen_;
};

}  // namespace kvscope
