#pragma once
// The base of every dock's content: the main window's frame timer calls refresh() with the store
// when the panel is visible and the store moved, never once per event.
#include <QWidget>

namespace kvscope {

class TelemetryStore;
class ViewState;

class TelemetryPanel : public QWidget {
  Q_OBJECT
 public:
  TelemetryPanel(ViewState& view, QWidget* parent = nullptr) : QWidget(parent), view_(view) {}
  virtual void refresh(const TelemetryStore& store) = 0;
  // As refresh(), skipping any rate limit the panel keeps (a screenshot or a seek must show the
  // store as it is now, not as of the last throttled recomputation).
  virtual void refreshNow(const TelemetryStore& store) { refresh(store); }
  // The shortest wall time between two refreshes by the frame timer (0: every frame it moved). A
  // table of numbers asks for 250 ms: digits that change thirty times a second cannot be read, and
  // measuring and shaping them again every frame cost the frame its budget with 64 workers.
  virtual int refreshIntervalMs() const { return 0; }

 protected:
  ViewState& view() { return view_; }

 private:
  ViewState& view_;
};

}  // namespace kvscope
