#pragma once
// A second run shown beside the open one (the console's compare view): run B whole in a store of its
// own, both runs' summaries, and their names. Built once and never changed, so the charts can read
// it from the GUI thread while nothing writes it; the offset between the two runs' clocks is the
// view's (ViewState::comparisonOffset), as it changes while the operator aligns them.
#include <optional>
#include <string>

#include "core/metrics/RunSideBySide.h"
#include "core/metrics/RunSummary.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

struct ComparedRun {
  std::string name_a, name_b;  // what the legend and the tables call them: the files' names
  TelemetryStore store_b;      // every event of run B
  RunSummary summary_a, summary_b;
  // A counterfactual's baseline (B is the twin under another policy): the twin's replay of A under
  // A's own policy and knobs, and what it is called ("twin, as recorded").
  std::optional<RunSummary> summary_base;
  std::string base_label;
  std::string b_label;         // what B is when it is not a plain recording ("twin under leastwork K=200")
  RunSideBySide side_by_side;  // of summary_a, summary_b and summary_base
};

}  // namespace kvscope
