#pragma once
// One gauge over time with bounded memory at any run length: the newest samples exactly (a ring of
// raw samples), older ones as coarser rollup levels whose buckets keep their min and max, so a chart
// of a 24-hour run still shows the one-second spike to 100% KV use.
//
// envelope() is what a chart draws: per pixel column, the min and max of the value the gauge held
// in that column's time. A gauge holds each sample until the next one, that instant included (a
// step has both values where it happens, so every riser is drawn); a pause
// between two samples longer than the gap threshold is a gap (no value), never a line across it.
// Columns served by the raw ring are exact; columns older than the ring come from the rollups and
// are marked inexact (a bucket is folded into every column it overlaps, so a spike is never lost).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "core/model/Ids.h"
#include "core/telemetry/ColumnGrid.h"

namespace kvscope {

struct MinMaxBucket {
  SimTime start = 0;  // time of the first sample folded in
  SimTime end = 0;    // time of the last sample folded in
  double min = 0;
  double max = 0;
  double last = 0;
};

struct RawSample {
  SimTime time = 0;
  float value = 0;
  float peak = 0;  // >= value: a spike between this sample and the previous one
};

struct EnvelopeColumn {
  bool present = false;  // the gauge had a value somewhere in the column
  bool exact = true;     // from raw samples (false: from a rollup bucket overlapping the column)
  double lo = 0;
  double hi = 0;
};

struct EnvelopeOptions {
  static constexpr SimTime kAutoGap = 0;
  // Gauges hold each sample until the next; point samples (one per finished request) do not.
  bool hold = true;
  // A pause longer than this between two samples is a gap. kAutoGap: 3 x the median interval of
  // the samples around the range (so a 1-s simulation and a 5-s scrape both read right).
  SimTime gap_after = kAutoGap;
  // The newest sample holds up to here (the run's current time) unless that is a gap too.
  SimTime hold_until = std::numeric_limits<SimTime>::min();
};

class MinMaxSeries {
 public:
  // `capacity` buckets per rollup level; level L+1 folds `fanout` buckets of level L into one;
  // `raw_capacity` newest samples kept exactly.
  explicit MinMaxSeries(std::size_t capacity = 4096, std::size_t fanout = 4, std::size_t levels = 8,
                        std::size_t raw_capacity = 1 << 16);

  // Samples arrive in time order; `peak` >= `value` records a spike between two samples.
  void add(SimTime time, double value, double peak);
  void add(SimTime time, double value) { add(time, value, value); }
  void clear();

  bool empty() const { return count_ == 0; }
  std::uint64_t count() const { return count_; }
  SimTime firstTime() const;
  SimTime lastTime() const;
  double lastValue() const;
  // Samples held exactly start here (the oldest raw sample).
  SimTime exactSince() const { return raw_.empty() ? 0 : raw_.front().time; }
  const std::deque<RawSample>& raw() const { return raw_; }
  // The value held at `t`: the newest sample at or before it (a rollup's last value when the ring
  // no longer reaches back to `t`); `fallback` before the first sample.
  double valueAt(SimTime t, double fallback = 0) const;
  // The largest value (or peak) the gauge reached in [from, to].
  double maxIn(SimTime from, SimTime to) const;

  // Per column of `grid`, the min and max of the value held there (see the file comment).
  std::vector<EnvelopeColumn> envelope(const ColumnGrid& grid, const EnvelopeOptions& options) const;
  // The gap threshold envelope() uses for `options` over `grid` (kAutoGap resolved).
  SimTime gapThreshold(const ColumnGrid& grid, const EnvelopeOptions& options) const;

  std::size_t levelCount() const { return levels_.size(); }
  std::size_t bucketsAt(std::size_t level) const { return levels_[level].buckets.size(); }
  std::size_t memoryBytes() const;

 private:
  struct Level {
    std::deque<MinMaxBucket> buckets;
    MinMaxBucket pending;  // being folded into the next level
    std::size_t pending_n = 0;
  };
  void push(std::size_t level, const MinMaxBucket& b);
  const Level* levelHolding(SimTime from) const;
  void foldRollups(const ColumnGrid& grid, SimTime until, SimTime gap, std::vector<EnvelopeColumn>& out) const;
  void foldRaw(const ColumnGrid& grid, const EnvelopeOptions& options, SimTime gap,
               std::vector<EnvelopeColumn>& out) const;

  std::size_t capacity_, fanout_, max_levels_, raw_capacity_;
  std::deque<RawSample> raw_;
  MinMaxBucket pending_raw_;  // raw samples being folded into level 0
  std::size_t pending_raw_n_ = 0;
  std::vector<Level> levels_;
  std::uint64_t count_ = 0;
};

}  // namespace kvscope
