#include "widgets/common/TimeAxisInput.h"

#include <QApplication>
#include <QWheelEvent>

#include <algorithm>

#include "widgets/common/ViewState.h"

namespace kvscope {

namespace {
constexpr double kDegreesPerNotch = 120.0;  // QWheelEvent::angleDelta: eighths of a degree, 15 degrees a notch
constexpr double kPanPerNotch = 0.1;        // a sideways notch moves a tenth of the span
}  // namespace

void TimeAxisInput::wheel(QWheelEvent* event, SimTime pointer_time) {
  const QPoint delta = event->angleDelta();
  if (delta.y() == 0 && delta.x() != 0)
    view_.panBy(-delta.x() / kDegreesPerNotch * kPanPerNotch);
  else
    view_.zoomAbout(pointer_time, delta.y() / kDegreesPerNotch);
  event->accept();
}

void TimeAxisInput::press(QPoint pos) {
  pressed_ = true;
  dragging_ = false;
  press_pos_ = pos;
  press_from_ = view_.from();
  press_span_ = view_.to() - view_.from();
}

bool TimeAxisInput::drag(QPoint pos, int plot_width) {
  if (!pressed_) return false;
  if (!dragging_ && (pos - press_pos_).manhattanLength() < QApplication::startDragDistance()) return false;
  dragging_ = true;
  const double dx = pos.x() - press_pos_.x();
  view_.panTo(press_from_ - static_cast<SimTime>(dx / std::max(1, plot_width) * static_cast<double>(press_span_)),
              press_span_);
  return true;
}

bool TimeAxisInput::release() {
  const bool click = pressed_ && !dragging_;
  pressed_ = dragging_ = false;
  return click;
}

void TimeAxisInput::hover(std::optional<SimTime> time) { view_.setCursorTime(time); }

void TimeAxisInput::doubleClick() { view_.resetZoom(); }

}  // namespace kvscope
