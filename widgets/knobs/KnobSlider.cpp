#include "widgets/knobs/KnobSlider.h"

#include <QSignalBlocker>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace kvscope {

namespace {
// `v` rounded to a multiple of `step`, printed without the float's noise (0.1 * 3, not 0.30000000000000004).
double roundTo(double v, double step) {
  if (!(step > 0)) return v;
  const double n = std::round(v / step);
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step))) + 1);
  const double scale = std::pow(10.0, decimals);
  return std::round(n * step * scale) / scale;
}

// The 1-2-5 step at or above `raw`.
double niceStep(double raw) {
  if (!(raw > 0)) return 0;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= raw * (1 - 1e-9)) return m * decade;
  return 10 * decade;
}
}  // namespace

KnobSlider::KnobSlider(const KnobSpec& spec, QWidget* parent)
    : QSlider(Qt::Horizontal, parent), min_(spec.min), max_(spec.max), integer_(spec.integer) {
  low_ = min_ > 0 ? min_ : (integer_ ? 1.0 : max_ * 1e-4);
  log_ = max_ > 0 && low_ > 0 && max_ / low_ >= 100;
  setRange(0, kSteps);
  setPageStep(kSteps / 20);
  setFocusPolicy(Qt::StrongFocus);  // focused by a click or Tab; the wheel alone does not focus it
  connect(this, &QSlider::actionTriggered, this, [this] {
    // sliderPosition is where the action leaves it; value() follows only after this signal.
    emit knobValueChosen(valueAt(sliderPosition()));
  });
}

double KnobSlider::valueAt(int position) const {
  if (position <= 0) return min_;  // the ends are the range's own, exactly
  if (position >= kSteps) return max_;
  const double frac = std::clamp(position, 0, kSteps) / static_cast<double>(kSteps);
  double v;
  if (!log_) {
    v = min_ + frac * (max_ - min_);
  } else {
    // With 0 in the range the first step is 0 and the rest span [low_, max_].
    const double start = min_ <= 0 ? 1.0 / kSteps : 0.0;
    const double f = (frac - start) / (1.0 - start);
    v = std::exp(std::log(low_) + std::clamp(f, 0.0, 1.0) * (std::log(max_) - std::log(low_)));
  }
  if (v > min_ && v < max_) {
    const double step = log_ ? std::pow(10.0, std::floor(std::log10(v)) - 1) : niceStep((max_ - min_) / 200);
    v = roundTo(v, step);
  }
  if (integer_) v = std::round(v);
  return std::clamp(v, min_, max_);
}

void KnobSlider::wheelEvent(QWheelEvent* event) {
  if (!hasFocus()) {
    event->ignore();  // to the scroll area around the knob list
    return;
  }
  QSlider::wheelEvent(event);
}

int KnobSlider::positionOf(double value) const {
  if (!(max_ > min_)) return 0;
  if (!log_) return static_cast<int>(std::lround((std::clamp(value, min_, max_) - min_) / (max_ - min_) * kSteps));
  if (value <= min_ || value < low_) return 0;
  const double start = min_ <= 0 ? 1.0 / kSteps : 0.0;
  const double f = (std::log(std::min(value, max_)) - std::log(low_)) / (std::log(max_) - std::log(low_));
  return static_cast<int>(std::lround((start + f * (1.0 - start)) * kSteps));
}

void KnobSlider::showValue(double value) {
  const QSignalBlocker block(this);
  setValue(positionOf(value));
}

}  // namespace kvscope
