#pragma once
// Pixel columns over a time range, in integer arithmetic: a chart, the envelope it draws and a
// brute-force check of that envelope put every microsecond in the same column.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/model/Ids.h"

namespace kvscope {

// Microseconds x columns outgrow 64 bits past ~13 days of range at 8K columns.
__extension__ using WideTime = __int128;

struct ColumnGrid {
  SimTime from = 0;
  SimTime to = 0;  // inclusive: a sample at `to` is in the last column
  int columns = 1;

  SimTime span() const { return std::max<SimTime>(1, to - from); }
  // The column of `t`, clamped to [0, columns - 1]; meaningful for t in [from, to].
  int columnOf(SimTime t) const {
    if (t <= from) return 0;
    const auto c = static_cast<WideTime>(t - from) * columns / span();
    return static_cast<int>(std::min<WideTime>(c, columns - 1));
  }
  // The first microsecond of column `c` (c in [0, columns]; `columns` gives one past `to`).
  SimTime columnStart(int c) const {
    if (c >= columns) return to + 1;
    const WideTime num = static_cast<WideTime>(c) * span();
    return from + static_cast<SimTime>((num + columns - 1) / columns);
  }
};

// columnOf() for times that come in order, many to a column: the division (128-bit) runs once per
// column entered, not once per sample. A dense gauge (a TTFT sample per finished request, 65K in
// the raw ring) spends most of its envelope there otherwise.
class ColumnCursor {
 public:
  explicit ColumnCursor(const ColumnGrid& grid) : grid_(grid) {}
  int columnOf(SimTime t) {
    if (t >= start_ && t < next_) return column_;
    column_ = grid_.columnOf(t);
    start_ = t <= grid_.from ? std::numeric_limits<SimTime>::min() : grid_.columnStart(column_);
    next_ = grid_.columnStart(column_ + 1);
    return column_;
  }
  // One past the last time of the column the last call returned.
  SimTime columnEnd() const { return next_; }

 private:
  const ColumnGrid& grid_;
  int column_ = 0;
  SimTime start_ = 0, next_ = 0;  // [start_, next_) maps to column_; empty until the first call
};

}  // namespace kvscope
