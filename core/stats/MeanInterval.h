#pragma once
// The mean of a sample with its confidence interval, in one of two forms:
// - Student t: mean +- t(1 - (1-c)/2, n-1) * s / sqrt(n), for quantities of either sign;
// - log scale, for quantities that cannot be negative (latencies, rates, counts): the t interval of
//   log(mean) by the delta method, SE(log mean) = SE / mean, back-transformed:
//   [mean / f, mean * f] with f = exp(t * SE / mean). Never below zero and never past it, wider above
//   the mean than below, as a skewed positive quantity's spread is; within ~1% of the Student interval
//   when SE is small against the mean. A mean of 0 (every value 0) has the interval [0, 0].
// The t quantile comes from Boost.Math. With fewer than two values there is no interval (half_width NaN).
#include <cstddef>
#include <span>
#include <string_view>

namespace kvscope {

struct MeanInterval {
  enum class Scale { StudentT, Log };

  std::size_t n = 0;
  double mean = 0;
  double stddev = 0;      // sample standard deviation (n - 1)
  double half_width = 0;  // of the Student t interval; NaN when n < 2
  double confidence = 0.95;
  Scale scale = Scale::StudentT;
  double lower = 0, upper = 0;  // the interval (NaN when n < 2)

  double low() const { return lower; }
  double high() const { return upper; }
  bool hasInterval() const;

  static MeanInterval of(std::span<const double> values, double confidence = 0.95);
  // For values that are all >= 0: the log-scale interval above. Throws std::invalid_argument on a
  // negative value (it would be a bug in the caller: use of()).
  static MeanInterval ofPositive(std::span<const double> values, double confidence = 0.95);
  // The two-sided Student t quantile t(1 - (1 - confidence) / 2, dof).
  static double tQuantile(double confidence, double dof);
};

// "Student t" / "log scale": what the reports print beside an interval.
std::string_view toString(MeanInterval::Scale s);

}  // namespace kvscope
