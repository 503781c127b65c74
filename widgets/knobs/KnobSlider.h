#pragma once
// A knob's slider over its registry range, beside its field: linear, or logarithmic where the range
// spans two decades or more (0 at the low end keeps the first step), so a budget from 1 to 10^8 is
// as easy to reach as a fraction from 0.5 to 1. Integer knobs land on whole numbers.
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

 signals:
  void knobValueChosen(double value);  // the operator moved it

 private:
  double min_, max_, low_;  // low_: the smallest positive value on a log scale
  bool integer_, log_;
};

}  // namespace kvscope
