#include "core/telemetry/MinMaxSeries.h"

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

void fold(EnvelopeColumn& c, double lo, double hi, bool exact) {
  if (!c.present) {
    c = {true, exact, lo, hi};
    return;
  }
  c.lo = std::min(c.lo, lo);
  c.hi = std::max(c.hi, hi);
  c.exact = c.exact && exact;
}
}  // namespace

MinMaxSeries::MinMaxSeries(std::size_t capacity, std::size_t fanout, std::size_t levels, std::size_t raw_capacity)
    : capacity_(std::max<std::size_t>(capacity, 2)),
      fanout_(std::max<std::size_t>(fanout, 2)),
      max_levels_(std::max<std::size_t>(levels, 1)),
      raw_capacity_(std::max<std::size_t>(raw_capacity, 2)) {
  levels_.emplace_back();
}

void MinMaxSeries::clear() {
  raw_.clear();
  pending_raw_n_ = 0;
  levels_.clear();
  levels_.emplace_back();
  count_ = 0;
}

void MinMaxSeries::add(SimTime time, double value, double peak) {
  if (!std::isfinite(value)) return;
  if (!std::isfinite(peak) || peak < value) peak = value;
  // The ring is searched by time: a sample stamped earlier than the newest (a source whose clock
  // stepped back) is kept at the newest time rather than breaking the order.
  if (!raw_.empty() && time < raw_.back().time) time = raw_.back().time;
  ++count_;
  raw_.push_back({time, static_cast<float>(value), static_cast<float>(peak)});
  if (raw_.size() > raw_capacity_) raw_.pop_front();
  // Rollups are fed as samples arrive, so they already hold what the ring lets go of.
  const MinMaxBucket b{time, time, value, peak, value};
  pending_raw_ = pending_raw_n_ == 0 ? b : merge(pending_raw_, b);
  if (++pending_raw_n_ == fanout_) {
    pending_raw_n_ = 0;
    push(0, pending_raw_);
  }
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
  SimTime first = raw_.empty() ? 0 : raw_.front().time;
  for (const Level& l : levels_)
    if (!l.buckets.empty()) first = std::min(first, l.buckets.front().start);
  return first;
}

SimTime MinMaxSeries::lastTime() const { return raw_.empty() ? 0 : raw_.back().time; }

double MinMaxSeries::lastValue() const { return raw_.empty() ? 0 : raw_.back().value; }

double MinMaxSeries::valueAt(SimTime t, double fallback) const {
  if (!raw_.empty() && raw_.front().time <= t) {
    auto it = std::upper_bound(raw_.begin(), raw_.end(), t, [](SimTime x, const RawSample& s) { return x < s.time; });
    return std::prev(it)->value;
  }
  for (const Level& l : levels_) {  // finest first
    if (l.buckets.empty() || l.buckets.front().end > t) continue;
    auto it = std::upper_bound(l.buckets.begin(), l.buckets.end(), t,
                               [](SimTime x, const MinMaxBucket& b) { return x < b.end; });
    return std::prev(it)->last;
  }
  return fallback;
}

double MinMaxSeries::maxIn(SimTime from, SimTime to) const {
  EnvelopeOptions points;
  points.hold = false;
  const auto columns = envelope({from, to, 1}, points);
  return columns.empty() || !columns[0].present ? -std::numeric_limits<double>::infinity() : columns[0].hi;
}

SimTime MinMaxSeries::gapThreshold(const ColumnGrid& grid, const EnvelopeOptions& options) const {
  if (options.gap_after != EnvelopeOptions::kAutoGap) return options.gap_after;
  if (raw_.size() < 2) return std::numeric_limits<SimTime>::max();
  // The median of up to 128 intervals starting where the range does: robust to a few long pauses.
  auto it =
      std::lower_bound(raw_.begin(), raw_.end(), grid.from, [](const RawSample& s, SimTime t) { return s.time < t; });
  std::size_t i = static_cast<std::size_t>(it - raw_.begin());
  i = std::min(i > 0 ? i - 1 : 0, raw_.size() - 2);
  const std::size_t n = std::min<std::size_t>(128, raw_.size() - 1 - i);
  const std::size_t start = std::min(i, raw_.size() - 1 - n);
  std::vector<SimTime> intervals;
  intervals.reserve(n);
  for (std::size_t k = start; k < start + n; ++k) intervals.push_back(raw_[k + 1].time - raw_[k].time);
  std::nth_element(intervals.begin(), intervals.begin() + static_cast<long>(intervals.size() / 2), intervals.end());
  return std::max<SimTime>(1, 3 * intervals[intervals.size() / 2]);
}

std::vector<EnvelopeColumn> MinMaxSeries::envelope(const ColumnGrid& grid, const EnvelopeOptions& options) const {
  std::vector<EnvelopeColumn> out;
  if (grid.columns <= 0 || grid.to < grid.from) return out;
  out.resize(static_cast<std::size_t>(grid.columns));
  if (empty()) return out;
  const SimTime gap = gapThreshold(grid, options);
  // The ring has let samples go: the part of the range before it comes from the rollups.
  if (count_ > raw_.size() && grid.from < raw_.front().time) foldRollups(grid, raw_.front().time, gap, out);
  foldRaw(grid, options, gap, out);
  return out;
}

// Sample i holds its value over [t_i, t_next]: up to and including the next sample's instant (a
// step shows both values there, so a change that lands on a column edge still draws its riser)
// unless the pause to it is a gap; the newest one up to options.hold_until. Each sample costs O(1)
// plus the columns it fills.
void MinMaxSeries::foldRaw(const ColumnGrid& grid, const EnvelopeOptions& options, SimTime gap,
                           std::vector<EnvelopeColumn>& out) const {
  auto it =
      std::lower_bound(raw_.begin(), raw_.end(), grid.from, [](const RawSample& s, SimTime t) { return s.time < t; });
  std::size_t i = static_cast<std::size_t>(it - raw_.begin());
  if (i > 0 && options.hold) --i;  // the sample held into the range
  ColumnCursor column(grid);
  if (!options.hold) {
    // Points (a TTFT per finished request: thousands to a column) hold nothing: a column's run of
    // samples folds into one min and max, in registers.
    while (i < raw_.size() && raw_[i].time <= grid.to) {
      const int c = column.columnOf(raw_[i].time);
      double lo = raw_[i].value, hi = raw_[i].peak;
      for (++i; i < raw_.size() && raw_[i].time < column.columnEnd(); ++i) {
        lo = std::min<double>(lo, raw_[i].value);
        hi = std::max<double>(hi, raw_[i].peak);
      }
      fold(out[static_cast<std::size_t>(c)], lo, hi, true);
    }
    return;
  }
  for (; i < raw_.size() && raw_[i].time <= grid.to; ++i) {
    const RawSample& s = raw_[i];
    SimTime held_to = s.time;  // exclusive
    if (options.hold) {
      if (i + 1 < raw_.size()) {
        const SimTime next = raw_[i + 1].time;
        if (next - s.time <= gap) held_to = next + 1;
      } else if (options.hold_until > s.time && options.hold_until - s.time <= gap) {
        held_to = options.hold_until + 1;  // hold_until itself still shows the value
      }
    }
    int first_held = 0;
    if (s.time >= grid.from) {
      const int c = column.columnOf(s.time);
      fold(out[static_cast<std::size_t>(c)], s.value, s.peak, true);
      first_held = c + 1;
    } else if (held_to <= grid.from) {
      continue;
    }
    if (held_to <= s.time) continue;
    const int last_held = column.columnOf(std::min(held_to - 1, grid.to));
    for (int c = first_held; c <= last_held; ++c) fold(out[static_cast<std::size_t>(c)], s.value, s.value, true);
  }
}

// The finest level that reaches back to `from` (else the coarsest), then finer levels for what it
// has not rolled up yet, up to `until` (the raw ring's first sample).
const MinMaxSeries::Level* MinMaxSeries::levelHolding(SimTime from) const {
  const Level* coarsest = nullptr;
  for (const Level& l : levels_) {
    if (l.buckets.empty()) continue;
    if (l.buckets.front().start <= from) return &l;
    coarsest = &l;
  }
  return coarsest;
}

void MinMaxSeries::foldRollups(const ColumnGrid& grid, SimTime until, SimTime gap,
                               std::vector<EnvelopeColumn>& out) const {
  const Level* start = levelHolding(grid.from);
  if (!start) return;
  SimTime cursor = grid.from;
  const MinMaxBucket* previous = nullptr;
  auto holdTo = [&](SimTime next_start) {
    if (!previous || next_start - previous->end > gap) return;
    const int first = grid.columnOf(std::max(previous->end, grid.from)) + 1;
    const int last = grid.columnOf(std::min({next_start, until - 1, grid.to}));  // as foldRaw: through the next start
    for (int c = first; c <= last; ++c) fold(out[static_cast<std::size_t>(c)], previous->last, previous->last, false);
  };
  for (std::size_t index = static_cast<std::size_t>(start - levels_.data()) + 1; index-- > 0;) {
    const Level* l = &levels_[index];
    auto it = std::lower_bound(l->buckets.begin(), l->buckets.end(), cursor,
                               [](const MinMaxBucket& b, SimTime t) { return b.end < t; });
    for (; it != l->buckets.end() && it->start < until && it->start <= grid.to; ++it) {
      if (previous && it->start <= previous->end) continue;  // already folded at a coarser level
      holdTo(it->start);
      const int first = grid.columnOf(std::max(it->start, grid.from));
      const int last = grid.columnOf(std::min({it->end, until - 1, grid.to}));
      for (int c = first; c <= last; ++c) fold(out[static_cast<std::size_t>(c)], it->min, it->max, false);
      previous = &*it;
      cursor = it->end + 1;
    }
  }
  holdTo(until);
}

std::size_t MinMaxSeries::memoryBytes() const {
  std::size_t n = raw_.size() * sizeof(RawSample);
  for (const Level& l : levels_) n += l.buckets.size() * sizeof(MinMaxBucket);
  return n + sizeof(*this);
}

}  // namespace kvscope
