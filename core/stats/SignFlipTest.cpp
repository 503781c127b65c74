#include "core/stats/SignFlipTest.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace kvscope {

namespace {

// Sums equal up to rounding count as "at least as extreme" (scipy uses a relative 1e-14; sums of
// the same numbers in a different order can differ by a few ulps).
double threshold(double observed) { return std::abs(observed) * (1 - 1e-12); }

// Every signed sum of `v`, 2^size of them.
std::vector<double> allSums(std::span<const double> v) {
  std::vector<double> sums{0.0};
  sums.reserve(std::size_t{1} << v.size());
  for (double x : v) {
    const std::size_t k = sums.size();
    for (std::size_t i = 0; i < k; ++i) {
      sums.push_back(sums[i] - x);
      sums[i] += x;
    }
  }
  return sums;
}

double exactP(std::span<const double> v, double observed) {
  const std::size_t half = v.size() / 2;
  const std::vector<double> left = allSums(v.first(half));
  std::vector<double> right = allSums(v.subspan(half));
  std::sort(right.begin(), right.end());
  const double t = threshold(observed);
  long double extreme = 0;
  for (double a : left) {
    // a + b >= t or a + b <= -t.
    extreme += static_cast<long double>(right.end() - std::lower_bound(right.begin(), right.end(), t - a));
    extreme += static_cast<long double>(std::upper_bound(right.begin(), right.end(), -t - a) - right.begin());
  }
  if (t == 0) extreme = static_cast<long double>(left.size() * right.size());  // observed 0: every pattern
  return static_cast<double>(std::min<long double>(1.0L, extreme / std::ldexp(1.0L, static_cast<int>(v.size()))));
}

double sampledP(std::span<const double> v, double observed) {
  // The values in groups of 8, each with the signed sums of its 256 sign patterns: a pattern's sum is
  // then one table look-up per 8 values (a branch per value costs ~10x as much: its sign is random).
  const std::size_t groups = (v.size() + 7) / 8;
  std::vector<double> table(groups * 256);
  for (std::size_t g = 0; g < groups; ++g)
    for (unsigned bits = 0; bits < 256; ++bits) {
      double sum = 0;
      for (std::size_t i = 0; i < 8 && g * 8 + i < v.size(); ++i) sum += (bits >> i & 1) ? v[g * 8 + i] : -v[g * 8 + i];
      table[g * 256 + bits] = sum;
    }
  std::mt19937_64 rng(SignFlipTest::kSeed);
  const double t = threshold(observed);
  long extreme = 0;
  for (int s = 0; s < SignFlipTest::kSamples; ++s) {
    double sum = 0;
    std::uint64_t bits = 0;
    for (std::size_t g = 0; g < groups; ++g) {
      if (g % 8 == 0) bits = rng();  // one engine output per 64 signs: fixed by the standard
      sum += table[g * 256 + (bits & 0xff)];
      bits >>= 8;
    }
    if (std::abs(sum) >= t) ++extreme;
  }
  return (static_cast<double>(extreme) + 1) / (SignFlipTest::kSamples + 1.0);
}

}  // namespace

double SignFlipTest::twoSidedP(std::span<const double> values, bool* exact) {
  double observed = 0;
  for (double x : values) observed += x;
  const bool all = values.size() <= static_cast<std::size_t>(kExactMaxPairs);
  if (exact) *exact = all;
  if (values.empty()) return 1.0;
  return all ? exactP(values, observed) : sampledP(values, observed);
}

SignFlipResult SignFlipTest::test(std::span<const double> differences) {
  SignFlipResult r;
  std::vector<double> d;
  for (double x : differences) {
    if (x == 0)
      ++r.zeros;
    else
      d.push_back(x);
  }
  r.n = static_cast<int>(d.size());
  if (d.empty()) {
    r.patterns = 1;
    return r;
  }
  double sum = 0;
  for (double x : d) sum += x;
  r.statistic = sum / static_cast<double>(d.size());
  r.p_value = twoSidedP(d, &r.exact);
  r.patterns = r.exact ? (1LL << r.n) : kSamples;
  return r;
}

double SignFlipTest::smallestPValue(int n) { return n <= 0 ? 1.0 : std::min(1.0, 2.0 / std::ldexp(1.0, n)); }

int SignFlipTest::pairsNeeded(double level) {
  int n = 1;
  while (smallestPValue(n) >= level && n < 1000) ++n;  // significant means p < level
  return n;
}

}  // namespace kvscope
