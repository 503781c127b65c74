#pragma once
// Two runs' summaries side by side (the console's compare view): the run's numbers row by row, each
// with A's value, B's and the change, and the decode workers matched by name (a worker only one run
// had has an empty side). Values as people read them: percentages in percent, latencies in seconds.
// A counterfactual (B: the twin under another policy) also carries its baseline, the twin's replay
// of A under A's own policy: B - baseline is the policy's effect as the twin sees it, B - A mixes
// it with the twin's own error.
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/RunSummary.h"

namespace kvscope {

struct SideBySideRow {
  std::string label;  // "TTFT p90 (s)"
  std::optional<double> a, b;
  std::optional<double> base;  // the baseline's, when there is one
  int decimals = 2;
  bool lower_is_better = true;  // how the change is to be read: TTFT down is better, APC up is
  // b - from, or nothing when either is missing: change() from A, changeFrom(base) from the baseline.
  std::optional<double> changeFrom(std::optional<double> from) const;
  std::optional<double> change() const { return changeFrom(a); }
  // The change as a share of where it is from (b / from - 1); nothing when that is 0 or missing.
  std::optional<double> relativeChangeFrom(std::optional<double> from) const;
  std::optional<double> relativeChange() const { return relativeChangeFrom(a); }
};

struct WorkerSideBySide {
  std::string worker;  // "D1"
  SideBySideRow share, ttft_p90, kv_peak, evictions;
};

struct RunSideBySide {
  std::vector<SideBySideRow> summary;
  std::vector<WorkerSideBySide> workers;  // A's decode workers in order, then any only B had

  static RunSideBySide of(const RunSummary& a, const RunSummary& b, const RunSummary* base = nullptr);
};

}  // namespace kvscope
