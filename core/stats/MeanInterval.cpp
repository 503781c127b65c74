#include "stats/MeanInterval.h"

#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

namespace kvscope {

bool MeanInterval::hasInterval() const { return n >= 2 && std::isfinite(half_width); }

double MeanInterval::tQuantile(double confidence, double dof) {
  const boost::math::students_t dist(dof);
  return boost::math::quantile(dist, 1.0 - (1.0 - confidence) / 2.0);
}

MeanInterval MeanInterval::of(std::span<const double> values, double confidence) {
  MeanInterval m;
  m.n = values.size();
  m.confidence = confidence;
  if (values.empty()) {
    m.half_width = std::numeric_limits<double>::quiet_NaN();
    return m;
  }
  double sum = 0;
  for (double v : values) sum += v;
  m.mean = sum / static_cast<double>(m.n);
  if (m.n < 2) {
    m.half_width = std::numeric_limits<double>::quiet_NaN();
    return m;
  }
  double ss = 0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  m.stddev = std::sqrt(ss / static_cast<double>(m.n - 1));
  m.half_width = tQuantile(confidence, static_cast<double>(m.n - 1)) * m.stddev / std::sqrt(static_cast<double>(m.n));
  return m;
}

}  // namespace kvscope
