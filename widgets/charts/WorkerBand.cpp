#include "widgets/charts/WorkerBand.h"

#include <algorithm>

namespace kvscope {

std::vector<BandColumn> workerBand(const std::vector<std::vector<EnvelopeColumn>>& envelopes) {
  std::size_t columns = 0;
  for (const auto& e : envelopes) columns = std::max(columns, e.size());
  std::vector<BandColumn> band(columns);
  std::vector<double> mids;
  mids.reserve(envelopes.size());
  for (std::size_t c = 0; c < columns; ++c) {
    BandColumn& b = band[c];
    mids.clear();
    for (const auto& e : envelopes) {
      if (c >= e.size() || !e[c].present) continue;
      const EnvelopeColumn& col = e[c];
      if (!b.present) {
        b.lo = col.lo;
        b.hi = col.hi;
      }
      b.present = true;
      b.lo = std::min(b.lo, col.lo);
      b.hi = std::max(b.hi, col.hi);
      mids.push_back((col.lo + col.hi) / 2);
    }
    b.workers = static_cast<int>(mids.size());
    if (mids.empty()) continue;
    // The lower median for an even count: a value some worker actually had.
    const auto mid = mids.begin() + static_cast<std::ptrdiff_t>((mids.size() - 1) / 2);
    std::nth_element(mids.begin(), mid, mids.end());
    b.median = *mid;
  }
  return band;
}

}  // namespace kvscope
