#pragma once
// Every panel of the console, once: its id (the object name QSettings restores the layout by), its
// title, the shortcut that shows or hides it, where the default layout docks it, and how to make it.
// PanelDocks creates the docks and the View menu's entries from this list; adding a panel is its
// class and one line in PanelRegistry.cpp, and a chart of a per-worker gauge is only the line:
// workerChart("queued") (WorkerChartPanel).
#include <Qt>

#include <functional>
#include <vector>

class QWidget;

namespace kvscope {

class TelemetryPanel;
class ViewState;

struct PanelSpec {
  const char* id;        // "kvPools"; its dock is "kvPoolsDock"
  const char* title;     // untranslated (QT_TRANSLATE_NOOP("PanelDocks", ...)), shown in the View menu
  const char* shortcut;  // QKeySequence text ("Alt+1"), shows or hides the dock; "" for none
  // Where the default layout puts it; NoDockWidgetArea: the window's central widget (one panel).
  Qt::DockWidgetArea area;
  std::function<TelemetryPanel*(ViewState& view, QWidget* parent)> make;
  // The default layout tabs it behind this panel's dock ("timeline"); "": its area alone places it.
  const char* tab_with = "";
};

// In creation order, which is the order docks sharing an area are laid out and tabbed in.
const std::vector<PanelSpec>& panelSpecs();

}  // namespace kvscope
