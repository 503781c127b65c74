#include "telemetry/MinMaxSeries.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvscope {

namespace {
MinMaxBucket merge(MinMaxBucket into, const MinMaxBucket& b) {
  into.min = std::min(into.min, b.min);
  into.max = std::max(into.max, b.max);
  into.end = b.end;
  into.last = b.last;
  return into;
}
}  // namespace

MinMaxSeries::MinMaxSeries(std::size_t capacity, std::size_t fanout, std::size_t levels)
    : capacity_(std::max<std::size_t>(capacity, 2)),
      fanout_(std::max<std::size_t>(fanout, 2)),
      max_levels_(std::max<std::size_t>(levels, 1)) {
  levels_.emplace_back();
}

void MinMaxSeries::clear() {
  levels_.clear();
  levels_.emplace_back();
  count_ = 0;
}

void MinMaxSeries::add(SimTime time, double value, double peak) {
  if (!std::isfinite(value)) return;
  if (!std::isfinite(peak) || peak < value) peak = value;
  ++count_;
  push(0, {time, time, value, peak, value});
}

// Every level keeps its newest `capacity_` buckets and folds each one into the next level as it
// arrives, so coarse levels reach further back than fine ones (about a third more memory in all).
void MinMaxSeries::push(std::size_t level, const MinMaxBucket& b) {
  if (levels_.size() == level) levels_.emplace_back();
  Level& l = levels_[level];
  l.buckets.push_back(b);
  if (l.buckets.size() > capacity_) l.buckets.pop_front();
  if (level + 1 >= max_levels_) return;
  l.pending = l.pending_n == 0 ? b : merge(l.pending, b);
  if (++l.pending_n == fanout_) {
    const MinMaxBucket done = l.pending;
    l.pending_n = 0;
    push(level + 1, done);
  }
}

SimTime MinMaxSeries::firstTime() const {
  for (auto it = levels_.rbegin(); it != levels_.rend(); ++it)
    if (!it->buckets.empty()) return it->buckets.front().start;
  return 0;
}

SimTime MinMaxSeries::lastTime() const { return levels_[0].buckets.empty() ? 0 : levels_[0].buckets.back().end; }

double MinMaxSeries::lastValue() const { return levels_[0].buckets.empty() ? 0 : levels_[0].buckets.back().last; }

// The finest level that still holds `from`, unless it would hand the decimation far more buckets
// than there are columns (then a coarser one is as exact per column and cheaper).
const MinMaxSeries::Level& MinMaxSeries::levelFor(SimTime from, SimTime to, int columns) const {
  const double span = std::max<double>(1, static_cast<double>(to - from));
  for (std::size_t i = 0; i < levels_.size(); ++i) {
    const Level& l = levels_[i];
    if (l.buckets.empty()) continue;
    const bool holds_from = l.buckets.front().start <= from || i + 1 == levels_.size();
    if (!holds_from) continue;
    // Bucket width at this level (average); keep at least ~1 bucket per column.
    const double held = static_cast<double>(l.buckets.back().end - l.buckets.front().start);
    const double width = held / static_cast<double>(l.buckets.size());
    if (i + 1 < levels_.size() && width > 0 && span / width > 16.0 * columns &&
        !levels_[i + 1].buckets.empty() && levels_[i + 1].buckets.front().start <= from)
      continue;
    return l;
  }
  return levels_.back().buckets.empty() ? levels_[0] : levels_.back();
}

std::vector<MinMaxPoint> MinMaxSeries::decimate(SimTime from, SimTime to, int columns) const {
  std::vector<MinMaxPoint> out;
  if (empty() || columns <= 0 || to < from) return out;
  const Level& l = levelFor(from, to, columns);
  const auto& b = l.buckets;
  auto it = std::lower_bound(b.begin(), b.end(), from, [](const MinMaxBucket& x, SimTime t) { return x.end < t; });
  const double span = std::max<double>(1, static_cast<double>(to - from));
  int current = -1;
  MinMaxPoint p;
  for (; it != b.end() && it->start <= to; ++it) {
    const SimTime mid = std::clamp<SimTime>(it->start + (it->end - it->start) / 2, from, to);
    const int column = std::min(columns - 1, static_cast<int>((mid - from) / span * columns));
    if (column != current) {
      if (current >= 0) out.push_back(p);
      current = column;
      p = {mid, it->min, it->max};
    } else {
      p.min = std::min(p.min, it->min);
      p.max = std::max(p.max, it->max);
    }
  }
  if (current >= 0) out.push_back(p);
  return out;
}

double MinMaxSeries::maxIn(SimTime from, SimTime to) const {
  double m = -std::numeric_limits<double>::infinity();
  for (const MinMaxPoint& p : decimate(from, to, 1)) m = std::max(m, p.max);
  return m;
}

std::size_t MinMaxSeries::memoryBytes() const {
  std::size_t n = 0;
  for (const Level& l : levels_) n += l.buckets.size() * sizeof(MinMaxBucket);
  return n + sizeof(*this);
}

}  // namespace kvscope
