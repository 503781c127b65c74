#pragma once
// Recordings given to `kvscope-cli compare`, arranged as a sweep: runs with the same scenario, policy
// and knob values form one point, named by what differs between the points; the runs pair up by seed
// when every point has the same seeds. When two recordings share both configuration and seed (runs
// of a real cluster usually do), each file is its own point and nothing is paired.
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/metrics/RunSummary.h"
#include "core/sweep/SweepData.h"

namespace kvscope {

struct RecordedRun {
  std::string file;  // as given (shown in the tables)
  RunStarted run;    // the recording's header: scenario, policy, seed, every knob at the start
  RunSummary summary;
};

class RecordedRunSet {
 public:
  // The first recording's point is the baseline.
  static SweepData arrange(const std::vector<RecordedRun>& runs, double level);
};

}  // namespace kvscope
