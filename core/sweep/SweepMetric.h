#pragma once
// The numbers a sweep compares across grid points (ARCHITECTURE.md D7), each read from a RunSummary:
// E2E mean/p50/p90, TTFT p90/p99, errors and failure rate, evictions, reseeds, token imbalance, the
// lab's APC, TPOT p90, uncached tokens p90, worst worker TTFT p90, request balance, decode tokens/s,
// completion rate and wall amplification, and each decode worker's share of bindings.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/RunSummary.h"

namespace kvscope {

struct SweepMetric {
  enum class Kind { Seconds, Fraction, Count, Ratio };
  std::string key;    // "e2e_mean_s": JSON and CSV
  std::string label;  // "E2E mean (s)": the tables
  Kind kind = Kind::Seconds;
  // Empty when the run has no value (token imbalance with a worker that served nothing).
  std::function<std::optional<double>(const RunSummary&)> value;

  std::string format(double v) const;  // "1.234", "12.5%", "3.0", "1.23x"

  // The fixed metrics, then `share_<id>` for every worker id in `worker_ids`.
  static std::vector<SweepMetric> all(const std::vector<std::string>& worker_ids);
};

}  // namespace kvscope
