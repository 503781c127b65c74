#pragma once
// The mean of a sample with its Student-t confidence interval: mean +- t(1 - (1-c)/2, n-1) * s / sqrt(n).
// The t quantile comes from Boost.Math. With fewer than two values there is no interval (half_width NaN).
#include <cstddef>
#include <span>

namespace kvscope {

struct MeanInterval {
  std::size_t n = 0;
  double mean = 0;
  double stddev = 0;        // sample standard deviation (n - 1)
  double half_width = 0;    // NaN when n < 2
  double confidence = 0.95;

  double low() const { return mean - half_width; }
  double high() const { return mean + half_width; }
  bool hasInterval() const;

  static MeanInterval of(std::span<const double> values, double confidence = 0.95);
  // The two-sided Student t quantile t(1 - (1 - confidence) / 2, dof).
  static double tQuantile(double confidence, double dof);
};

}  // namespace kvscope
