#pragma once
// The mouse on a time axis, the same in every time view (charts, the event timeline): the wheel
// zooms about the time under the pointer and a sideways swipe pans, a drag pans, a double-click
// returns to the live edge, and hovering moves the shared cursor. Each view keeps one and feeds it
// its events with the time its pixel column shows; ViewState does the range arithmetic.
#include <QPoint>

#include <optional>

#include "core/model/Ids.h"

class QWheelEvent;

namespace kvscope {

class ViewState;

class TimeAxisInput {
 public:
  explicit TimeAxisInput(ViewState& view) : view_(view) {}

  // A wheel turn or swipe over the plot, the pointer at `pointer_time`. Accepts the event.
  void wheel(QWheelEvent* event, SimTime pointer_time);
  // The left button went down at `pos`: a drag from here pans the range as it is now.
  void press(QPoint pos);
  // The pointer moved to `pos` with the button down, over a plot `plot_width` px wide: pans once it
  // has moved further than the platform's drag distance. True while it is a drag.
  bool drag(QPoint pos, int plot_width);
  // The button went up: true when it was a click (it never became a drag).
  bool release();
  bool pressed() const { return pressed_; }
  bool dragging() const { return dragging_; }
  // The pointer is over the plot at `time`, or (nullopt) has left it.
  void hover(std::optional<SimTime> time);
  void doubleClick();

 private:
  ViewState& view_;
  bool pressed_ = false, dragging_ = false;
  QPoint press_pos_;
  SimTime press_from_ = 0, press_span_ = 0;
};

}  // namespace kvscope
