#pragma once
// Ordinary least squares for the hardware profile's constants, with the numbers
// that say how far a fitted constant can be trusted. Its own class so that the Eigen solver stays in
// one .cpp (Eigen is PRIVATE to kvscope_core) and the orchestration (ProfileCalibration) reads plain
// vectors. No intercept is added: a caller that wants one passes a column of ones.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace kvscope {

// How well one least-squares fit describes its samples.
struct FitQuality {
  // 1 - SS_res / SS_tot: SS_tot about y's mean when a column is constant (an intercept), else about 0
  double r2 = std::numeric_limits<double>::quiet_NaN();
  double residual_sd = std::numeric_limits<double>::quiet_NaN();  // sqrt(SS_res / (n - k))
  long samples = 0;
};

struct LinearFit {
  bool ok = false;                // false: fewer samples than coefficients + 1, or the columns are dependent
  std::string problem;            // why not ok
  std::vector<double> coef;       // one per column
  std::vector<double> std_error;  // sqrt(diag(sigma^2 (X'X)^-1)), one per column
  int rank = 0;                   // of the (column-scaled) design matrix
  FitQuality quality;
  std::vector<double> fitted;  // X b, one per sample
};

// One regressor's spread over the samples.
struct Spread {
  double mean = 0, sd = 0, min = 0, max = 0;
  long distinct = 0;  // distinct values (capped at 3: "at least 3" is all that is asked)
  // sd / |mean| (0 when the mean is 0 and so is sd)
  double relative() const { return mean != 0 ? sd / (mean < 0 ? -mean : mean) : (sd > 0 ? 1e300 : 0); }
};

class ProfileFit {
 public:
  // y ~ X b, X row-major with `columns` values per sample (X.size() == y.size() * columns).
  // Columns are scaled to unit norm before the column-pivoting QR (Eigen's ColPivHouseholderQR), so
  // a token count of 1e5 and a column of ones are treated alike when deciding the rank.
  static LinearFit leastSquares(const std::vector<double>& X, std::size_t columns, const std::vector<double>& y);
  static Spread spread(const std::vector<double>& x);
};

}  // namespace kvscope
