#include "widgets/charts/AxisTicks.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

AxisTicks AxisTicks::make(double lo, double hi, int target) {
  AxisTicks out;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  const double raw = (hi - lo) / std::max(1, target);
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  out.step = step;
  // Decimals enough to tell two neighbouring ticks apart (a step of 0.25 needs none: 1, 2, 5 only).
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double v = first; v <= hi + step * 1e-9; v += step) {
    const double rounded = std::round(v / step) * step;
    out.ticks.push_back({rounded, QString::number(rounded == 0 ? 0.0 : rounded, 'f', decimals)});
    if (out.ticks.size() > 1000) break;  // a degenerate range; never loop long
  }
  return out;
}

double AxisTicks::niceTop(double v) {
  if (!(v > 0)) return 1;
  const double magnitude = std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= v) return m * magnitude;
  return 10 * magnitude;
}

}  // namespace kvscope
