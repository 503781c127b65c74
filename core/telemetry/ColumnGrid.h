#pragma once
// Pixel columns over a time range, in integer arithmetic: a chart, the envelope it draws and a
// brute-force check of that envelope put every microsecond in the same column.
#include <algorithm>
#include <cstdint>

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

}  // namespace kvscope
