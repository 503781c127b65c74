#pragma once
// Panel 3 of the console: the event timeline dock. Hosts the painted EventTimelineView, a Live toggle
// (zoom and pan stop following the live edge; this restores it), a filter by kind, and the full
// record of the selected event, whether it was clicked here or chosen by another panel.
#include <array>
#include <cstdint>

#include "widgets/common/TelemetryPanel.h"
#include "widgets/timeline/EventTimelineView.h"

class QAction;
class QPlainTextEdit;
class QScrollArea;
class QToolButton;

namespace kvscope {

class EventTimelinePanel : public TelemetryPanel {
  Q_OBJECT
 public:
  explicit EventTimelinePanel(ViewState& view, QWidget* parent = nullptr);

  void refresh(const TelemetryStore& store) override;

  EventTimelineView* timeline() const { return timeline_; }
  QScrollArea& rowsArea() { return *scroll_; }  // scrolls only when the rows outgrow the dock
  // The checkable action that shows or hides one kind (object name "filter-<key>").
  QAction* filterAction(TimelineKind kind) const { return filters_[static_cast<std::size_t>(kind)]; }
  QToolButton* liveButton() const { return live_; }
  QString detailsText() const;

 private:
  void showDetails(std::uint64_t seq, SimTime time);

  const TelemetryStore* store_ = nullptr;
  EventTimelineView* timeline_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  QToolButton* live_ = nullptr;
  QPlainTextEdit* details_ = nullptr;
  std::array<QAction*, kTimelineKinds> filters_{};
  std::uint64_t shown_seq_ = 0;
  SimTime shown_time_ = 0;
  bool details_pending_ = false;  // selected ahead of the store: look again on refresh
};

}  // namespace kvscope
