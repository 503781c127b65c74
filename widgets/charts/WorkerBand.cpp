#include "widgets/charts/WorkerBand.h"

#include <algorithm>

namespace kvscope {

std::vector<BandColumn> workerBand(const std::vector<std::vector<EnvelopeColumn>>& envelopes) {
  std::size_t columns = 0;
  for (const auto& e : envelopes) columns = std::max(columns, e.size());
  std::vector<BandColumn> band(columns);
  // Worker by worker, each envelope read in order (column by column across 64 envelopes was most
  // of a frame's band work): the extremes, and each column's midpoints in a row of their own.
  const std::size_t workers = envelopes.size();
  std::vector<double> mids(columns * workers);
  for (const auto& e : envelopes)
    for (std::size_t c = 0; c < e.size(); ++c) {
      const EnvelopeColumn& col = e[c];
      if (!col.present) continue;
      BandColumn& b = band[c];
      if (!b.present) {
        b.present = true;
        b.lo = col.lo;
        b.hi = col.hi;
      }
      b.lo = std::min(b.lo, col.lo);
      b.hi = std::max(b.hi, col.hi);
      mids[c * workers + static_cast<std::size_t>(b.workers++)] = (col.lo + col.hi) / 2;
    }
  for (std::size_t c = 0; c < columns; ++c) {
    BandColumn& b = band[c];
    if (b.workers == 0) continue;
    // The lower median for an even count: a value some worker actually had.
    const auto first = mids.begin() + static_cast<std::ptrdiff_t>(c * workers);
    const auto mid = first + (b.workers - 1) / 2;
    std::nth_element(first, mid, first + b.workers);
    b.median = *mid;
  }
  return band;
}

}  // namespace kvscope
