#pragma once
// A knob's slider over its registry range, beside its field: linear, or logarithmic where the range
// spans two decades or more (0 at the low end keeps the first step), so a budget from 1 to 10^8 is
// as easy to reach as a fraction from 0.5 to 1. Integer knobs land on whole numbers, and every
// value it chooses is a round one: two significant digits on a log scale, a 1-2-5 step of about a
// 200th of the range on a linear one (K = 200, not 196.922025548). It takes the mouse wheel only
// when focused, so scrolling the knob list never edits the knob under the pointer.
#include <QSlider>

#include "core/knobs/Knob.h"

namespace kvscope {

class KnobSlider : public QSlider {
  Q_OBJECT
 public:
  static constexpr int kSteps = 1000;

  explicit KnobSlider(const KnobSpec& spec, QWidget* parent = nullptr);

  bool logarithmic() const { return log_; }
  double valueAt(int position) const;
  int positionOf(double value) const;
  // Follows the field (the pending value) without telling anyone.
  void showValue(double value);

 protected:
  void wheelEvent(QWheelEvent* event) override;

 signals:
  void knobValueChosen(double value);  // the operator moved it

 private:
  double min_, max_, low_;  // low_: the smallest positive value on a log scale
  bool integer_, log_;
};

}  // namespace kvscope
