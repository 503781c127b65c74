#include "widgets/knobs/KnobSlider.h"

#include <QSignalBlocker>

#include <algorithm>
#include <cmath>

namespace kvscope {

KnobSlider::KnobSlider(const KnobSpec& spec, QWidget* parent)
    : QSlider(Qt::Horizontal, parent), min_(spec.min), max_(spec.max), integer_(spec.integer) {
  low_ = min_ > 0 ? min_ : (integer_ ? 1.0 : max_ * 1e-4);
  log_ = max_ > 0 && low_ > 0 && max_ / low_ >= 100;
  setRange(0, kSteps);
  setPageStep(kSteps / 20);
  connect(this, &QSlider::actionTriggered, this, [this] {
    // sliderPosition is where the action leaves it; value() follows only after this signal.
    emit knobValueChosen(valueAt(sliderPosition()));
  });
}

double KnobSlider::valueAt(int position) const {
  const double frac = std::clamp(position, 0, kSteps) / static_cast<double>(kSteps);
  double v;
  if (!log_) {
    v = min_ + frac * (max_ - min_);
  } else if (min_ <= 0 && position <= 0) {
    v = min_;  // the first step is the range's own low end (0: "off")
  } else {
    // With 0 in the range the first step is 0 and the rest span [low_, max_].
    const double start = min_ <= 0 ? 1.0 / kSteps : 0.0;
    const double f = (frac - start) / (1.0 - start);
    v = std::exp(std::log(low_) + std::clamp(f, 0.0, 1.0) * (std::log(max_) - std::log(low_)));
  }
  if (integer_) v = std::round(v);
  return std::clamp(v, min_, max_);
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
