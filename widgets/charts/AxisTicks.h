#pragma once
// Tick marks at round values (1, 2 or 5 x 10^k) with labels printed to the step's precision, so
// an axis never repeats a label and never shows 0.30000000000000004.
#include <QString>

#include <vector>

namespace kvscope {

struct AxisTicks {
  struct Tick {
    double value = 0;
    QString label;
  };
  std::vector<Tick> ticks;
  double step = 1;

  // Round ticks in [lo, hi], about `target` of them.
  static AxisTicks make(double lo, double hi, int target);
  // The smallest 1, 2, 2.5 or 5 x 10^k at or above `v`: a tidy axis top that changes rarely.
  static double niceTop(double v);
};

}  // namespace kvscope
