#include "core/calibration/ProfileFit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <Eigen/Dense>

namespace kvscope {

LinearFit ProfileFit::leastSquares(const std::vector<double>& X, std::size_t columns, const std::vector<double>& y) {
  LinearFit fit;
  const auto n = static_cast<Eigen::Index>(y.size());
  const auto k = static_cast<Eigen::Index>(columns);
  fit.quality.samples = static_cast<long>(n);
  if (k == 0 || X.size() != y.size() * columns) {
    fit.problem = "no regressor";
    return fit;
  }
  if (n < k + 1) {
    fit.problem = std::to_string(n) + " samples for " + std::to_string(k) + " coefficients";
    return fit;
  }
  Eigen::MatrixXd A(n, k);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < k; ++j) A(i, j) = X[static_cast<std::size_t>(i * k + j)];
    b(i) = y[static_cast<std::size_t>(i)];
  }
  Eigen::VectorXd scale = A.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < k; ++j)
    if (!(scale(j) > 0) || !std::isfinite(scale(j))) {
      fit.problem = "column " + std::to_string(j) + " is all zero";
      return fit;
    }
  const Eigen::MatrixXd As = A * scale.cwiseInverse().asDiagonal();
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(As);
  qr.setThreshold(1e-9);
  fit.rank = static_cast<int>(qr.rank());
  if (qr.rank() < k) {
    fit.problem =
        "the regressors are linearly dependent (rank " + std::to_string(qr.rank()) + " of " + std::to_string(k) + ")";
    return fit;
  }
  const Eigen::VectorXd bs = qr.solve(b);
  const Eigen::VectorXd coef = bs.cwiseQuotient(scale);
  const Eigen::VectorXd pred = A * coef;
  const Eigen::VectorXd res = b - pred;
  const double ss_res = res.squaredNorm();
  // R^2 about y's mean when a column is constant (an intercept); otherwise the model goes through the
  // origin and R^2 is about zero (1 - SS_res / sum y^2), as for any regression without an intercept.
  bool intercept = false;
  for (Eigen::Index j = 0; j < k && !intercept; ++j) intercept = A.col(j).maxCoeff() == A.col(j).minCoeff();
  const double ss_tot = intercept ? (b.array() - b.mean()).matrix().squaredNorm() : b.squaredNorm();
  const double dof = static_cast<double>(n - k);
  const double sigma2 = ss_res / dof;
  fit.quality.residual_sd = std::sqrt(sigma2);
  fit.quality.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();
  // Var(b) = sigma^2 (X'X)^-1, computed on the scaled columns (well conditioned) and scaled back.
  const Eigen::MatrixXd xtx = As.transpose() * As;
  const Eigen::MatrixXd inv = xtx.ldlt().solve(Eigen::MatrixXd::Identity(k, k));
  fit.coef.resize(static_cast<std::size_t>(k));
  fit.std_error.resize(static_cast<std::size_t>(k));
  for (Eigen::Index j = 0; j < k; ++j) {
    fit.coef[static_cast<std::size_t>(j)] = coef(j);
    fit.std_error[static_cast<std::size_t>(j)] = std::sqrt(std::max(0.0, sigma2 * inv(j, j))) / scale(j);
  }
  fit.fitted.assign(pred.data(), pred.data() + n);
  fit.ok = true;
  return fit;
}

Spread ProfileFit::spread(const std::vector<double>& x) {
  Spread s;
  if (x.empty()) return s;
  double sum = 0;
  s.min = s.max = x.front();
  std::set<double> seen;
  for (double v : x) {
    sum += v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    if (seen.size() < 3) seen.insert(v);
  }
  s.mean = sum / static_cast<double>(x.size());
  double ss = 0;
  for (double v : x) ss += (v - s.mean) * (v - s.mean);
  s.sd = x.size() > 1 ? std::sqrt(ss / static_cast<double>(x.size() - 1)) : 0;
  s.distinct = static_cast<long>(seen.size());
  return s;
}

}  // namespace kvscope
