#include "core/stats/WilcoxonSignedRank.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/stats/SignFlipTest.h"

namespace kvscope {

namespace {

// counts[w] = number of sign patterns of ranks 1..n whose positive ranks sum to w.
std::vector<double> nullCounts(int n) {
  const int max_sum = n * (n + 1) / 2;
  std::vector<double> counts(static_cast<std::size_t>(max_sum) + 1, 0.0);
  counts[0] = 1;
  for (int rank = 1; rank <= n; ++rank)
    for (int w = max_sum; w >= rank; --w)
      counts[static_cast<std::size_t>(w)] += counts[static_cast<std::size_t>(w - rank)];
  return counts;
}

double normalSf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

double WilcoxonSignedRank::smallestPValue(int n) { return n <= 0 ? 1.0 : std::min(1.0, 2.0 / std::ldexp(1.0, n)); }

WilcoxonResult WilcoxonSignedRank::test(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw std::invalid_argument("Wilcoxon signed-rank: paired samples of different sizes");
  std::vector<double> d(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) d[i] = x[i] - y[i];
  return test(d);
}

WilcoxonResult WilcoxonSignedRank::test(std::span<const double> differences) {
  WilcoxonResult r;
  std::vector<double> d;
  for (double v : differences) {
    if (v == 0)
      ++r.zeros;
    else
      d.push_back(v);
  }
  const int n = static_cast<int>(d.size());
  r.n = n;
  if (n == 0) return r;  // nothing differs: p = 1

  // Average ranks of |d|, remembering tie group sizes for the variance correction.
  std::vector<std::size_t> order(d.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return std::abs(d[a]) < std::abs(d[b]); });
  std::vector<double> rank(d.size());
  double tie_term = 0;  // sum of t^3 - t over tie groups
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && std::abs(d[order[j + 1]]) == std::abs(d[order[i]])) ++j;
    const double avg = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = avg;
    const double t = static_cast<double>(j - i + 1);
    if (t > 1) {
      r.ties = true;
      tie_term += t * t * t - t;
    }
    i = j + 1;
  }
  for (std::size_t i = 0; i < d.size(); ++i) (d[i] > 0 ? r.w_plus : r.w_minus) += rank[i];
  r.statistic = std::min(r.w_plus, r.w_minus);

  const double nn = n;
  if (!r.ties && n <= kExactMaxN) {
    r.exact = true;
    const auto counts = nullCounts(n);
    const double total = std::ldexp(1.0, n);
    const auto wp = static_cast<std::size_t>(std::lround(r.w_plus));
    double less = 0, greater = 0;
    for (std::size_t w = 0; w < counts.size(); ++w) {
      if (w <= wp) less += counts[w];
      if (w >= wp) greater += counts[w];
    }
    r.p_value = std::min(1.0, 2.0 * std::min(less, greater) / total);
    return r;
  }
  if (n <= kExactTiesMaxN) {
    // Tied ranks: the null distribution of the signed rank sum, counted over every sign pattern of
    // these very (average) ranks.
    std::vector<double> signed_ranks(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) signed_ranks[i] = d[i] > 0 ? rank[i] : -rank[i];
    r.exact = true;
    r.p_value = SignFlipTest::twoSidedP(signed_ranks);
    return r;
  }
  const double mean = nn * (nn + 1) / 4.0;
  const double var = nn * (nn + 1) * (2 * nn + 1) / 24.0 - tie_term / 48.0;
  if (var <= 0) {
    r.p_value = 1;
    return r;
  }
  const double diff = r.statistic - mean;
  const double correction = diff > 0 ? 0.5 : (diff < 0 ? -0.5 : 0.0);
  r.z = (diff - correction) / std::sqrt(var);
  r.p_value = std::min(1.0, 2.0 * normalSf(std::abs(r.z)));
  return r;
}

}  // namespace kvscope
