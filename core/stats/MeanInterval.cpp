#include "core/stats/MeanInterval.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

namespace kvscope {

std::string_view toString(MeanInterval::Scale s) { return s == MeanInterval::Scale::Log ? "log scale" : "Student t"; }

bool MeanInterval::hasInterval() const { return n >= 2 && std::isfinite(half_width); }

double MeanInterval::tQuantile(double confidence, double dof) {
  const boost::math::students_t dist(dof);
  return boost::math::quantile(dist, 1.0 - (1.0 - confidence) / 2.0);
}

MeanInterval MeanInterval::of(std::span<const double> values, double confidence) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  MeanInterval m;
  m.n = values.size();
  m.confidence = confidence;
  m.half_width = m.lower = m.upper = nan;
  if (values.empty()) return m;
  double sum = 0;
  for (double v : values) sum += v;
  m.mean = sum / static_cast<double>(m.n);
  if (m.n < 2) return m;
  double ss = 0;
  for (double v : values) ss += (v - m.mean) * (v - m.mean);
  m.stddev = std::sqrt(ss / static_cast<double>(m.n - 1));
  m.half_width = tQuantile(confidence, static_cast<double>(m.n - 1)) * m.stddev / std::sqrt(static_cast<double>(m.n));
  m.lower = m.mean - m.half_width;
  m.upper = m.mean + m.half_width;
  return m;
}

MeanInterval MeanInterval::ofPositive(std::span<const double> values, double confidence) {
  for (double v : values)
    if (v < 0) throw std::invalid_argument("log-scale interval: a negative value");
  MeanInterval m = of(values, confidence);
  m.scale = Scale::Log;
  if (!m.hasInterval()) return m;
  if (m.mean <= 0) {  // every value 0
    m.lower = m.upper = 0;
    return m;
  }
  const double f = std::exp(m.half_width / m.mean);  // half_width = t * SE
  m.lower = m.mean / f;
  m.upper = m.mean * f;
  return m;
}

}  // namespace kvscope
