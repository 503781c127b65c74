#include "core/stats/LatencySample.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

namespace {
// Bucket i holds (kMin * g^(i-1), kMin * g^i] with g = (1 + e) / (1 - e); its representative value
// 2 * kMin * g^i / (1 + g) is within e of every value in it.
constexpr double kGamma = (1 + LatencySample::kRelativeError) / (1 - LatencySample::kRelativeError);
const double kLogGamma = std::log(kGamma);
const std::size_t kBuckets =
    static_cast<std::size_t>(std::ceil(std::log(LatencySample::kMaxValue / LatencySample::kMinValue) / kLogGamma)) + 1;

std::size_t bucketOf(double v) {
  if (!(v > LatencySample::kMinValue)) return 0;
  const double i = std::ceil(std::log(v / LatencySample::kMinValue) / kLogGamma);
  return std::min(kBuckets - 1, static_cast<std::size_t>(i));
}

double bucketValue(std::size_t i) {
  return 2 * LatencySample::kMinValue * std::pow(kGamma, static_cast<double>(i)) / (1 + kGamma);
}
}  // namespace

void LatencySample::add(double seconds) {
  min_ = count_ == 0 ? seconds : std::min(min_, seconds);
  max_ = count_ == 0 ? seconds : std::max(max_, seconds);
  ++count_;
  sum_ += seconds;
  if (!exact()) return addToHistogram(seconds);
  values_.push_back(seconds);
  if (values_.size() > exact_limit_) foldIntoHistogram();
}

void LatencySample::addToHistogram(double v) { ++buckets_[bucketOf(v)]; }

void LatencySample::foldIntoHistogram() {
  buckets_.assign(kBuckets, 0);
  for (double v : values_) addToHistogram(v);
  std::vector<double>().swap(values_);  // give the memory back, not just the size
  sorted_ = 0;
}

double LatencySample::valueAtRank(std::uint64_t rank) const {
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen <= rank) continue;
    // The under- and overflow buckets stand for the extremes, which are known exactly; no other
    // bucket's representative may lie outside them either.
    if (i == 0) return min_;
    if (i + 1 == buckets_.size()) return max_;
    return std::clamp(bucketValue(i), min_, max_);
  }
  return max_;
}

SampleSummary LatencySample::summary() const {
  SampleSummary s;
  s.count = count_;
  if (count_ == 0) return s;
  s.mean = sum_ / static_cast<double>(count_);
  if (exact()) {
    // Sort only what arrived since the last summary, then merge: the console asks every second.
    std::sort(values_.begin() + static_cast<std::ptrdiff_t>(sorted_), values_.end());
    std::inplace_merge(values_.begin(), values_.begin() + static_cast<std::ptrdiff_t>(sorted_), values_.end());
    sorted_ = values_.size();
    s.p50 = percentileSorted(values_, 50);
    s.p90 = percentileSorted(values_, 90);
    s.p99 = percentileSorted(values_, 99);
    return s;
  }
  // The same interpolation as percentileSorted, between the two ranks around the position.
  auto at = [&](double q) {
    const double pos = q / 100.0 * static_cast<double>(count_ - 1);
    const auto lo = static_cast<std::uint64_t>(std::floor(pos));
    const double a = valueAtRank(lo), b = valueAtRank(std::min<std::uint64_t>(lo + 1, count_ - 1));
    return a + (b - a) * (pos - static_cast<double>(lo));
  };
  s.p50 = at(50);
  s.p90 = at(90);
  s.p99 = at(99);
  return s;
}

std::size_t LatencySample::memoryBytes() const {
  return sizeof(*this) + values_.capacity() * sizeof(double) + buckets_.capacity() * sizeof(std::uint64_t);
}

void LatencySample::clear() { *this = LatencySample(exact_limit_); }

}  // namespace kvscope

namespace kvscope {

double LatencySample::quantile(double q) const {
  if (count_ == 0) return 0;
  if (exact()) {
    summary();  // sorts what came since the last call
    return percentileSorted(values_, q);
  }
  const double pos = q / 100.0 * static_cast<double>(count_ - 1);
  const auto lo = static_cast<std::uint64_t>(std::floor(pos));
  const double a = valueAtRank(lo), b = valueAtRank(std::min<std::uint64_t>(lo + 1, count_ - 1));
  return a + (b - a) * (pos - static_cast<double>(lo));
}

}  // namespace kvscope
