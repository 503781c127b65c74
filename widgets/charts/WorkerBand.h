#pragma once
// The band of "the other workers" a chart draws when it has too many workers for one line each:
// per pixel column the min, the median and the max over those workers. Min and max are exact: the
// lowest lo and the highest hi of the workers' envelope columns (MinMaxSeries::envelope), so a
// spike of any one worker still reaches the band's edge at any zoom. The median is approximate: the
// median of the workers' column midpoints ((lo + hi) / 2), i.e. of each worker's level in that
// column, which is what "the typical worker" means at a glance.
#include <vector>

#include "core/telemetry/MinMaxSeries.h"

namespace kvscope {

struct BandColumn {
  bool present = false;  // at least one worker had a value in the column
  int workers = 0;       // how many did
  double lo = 0, median = 0, hi = 0;
};

// `envelopes[w]` is worker w's envelope over the same grid (a column count per worker; a shorter
// one has no value in the missing columns).
std::vector<BandColumn> workerBand(const std::vector<std::vector<EnvelopeColumn>>& envelopes);

}  // namespace kvscope
