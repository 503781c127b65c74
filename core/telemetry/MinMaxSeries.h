#pragma once
// One gauge over time with bounded memory at any run length: a ring of raw samples plus coarser
// rollup levels, each bucket keeping its min and max, so a chart of a 24-hour run still shows the
// one-second spike to 100% KV use (DESIGN.md "The telemetry store is bounded").
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "model/Ids.h"

namespace kvscope {

struct MinMaxBucket {
  SimTime start = 0;  // time of the first sample folded in
  SimTime end = 0;    // time of the last sample folded in
  double min = 0;
  double max = 0;
  double last = 0;
};

// A decimated point for a chart column; charts draw min then max at `time`.
struct MinMaxPoint {
  SimTime time = 0;
  double min = 0;
  double max = 0;
};

class MinMaxSeries {
 public:
  // `capacity` buckets per level; level L+1 folds `fanout` buckets of level L into one.
  explicit MinMaxSeries(std::size_t capacity = 4096, std::size_t fanout = 4, std::size_t levels = 8);

  // Samples arrive in time order; `peak` >= `value` records a spike between two samples.
  void add(SimTime time, double value, double peak);
  void add(SimTime time, double value) { add(time, value, value); }
  void clear();

  bool empty() const { return count_ == 0; }
  std::uint64_t count() const { return count_; }
  SimTime firstTime() const;
  SimTime lastTime() const;
  double lastValue() const;
  // The largest max over [from, to] at the finest level that still holds `from`.
  double maxIn(SimTime from, SimTime to) const;

  // At most `columns` points covering [from, to]: every column keeps the min and max of all the
  // samples that fall in it, at the finest resolution still held for `from`.
  std::vector<MinMaxPoint> decimate(SimTime from, SimTime to, int columns) const;

  std::size_t levelCount() const { return levels_.size(); }
  std::size_t bucketsAt(std::size_t level) const { return levels_[level].buckets.size(); }
  std::size_t memoryBytes() const;

 private:
  struct Level {
    std::deque<MinMaxBucket> buckets;
    MinMaxBucket pending;      // being folded into the next level
    std::size_t pending_n = 0;
  };
  void push(std::size_t level, const MinMaxBucket& b);
  const Level& levelFor(SimTime from, SimTime to, int columns) const;

  std::size_t capacity_, fanout_, max_levels_;
  std::vector<Level> levels_;
  std::uint64_t count_ = 0;
};

}  // namespace kvscope
