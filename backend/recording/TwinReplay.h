#pragma once
// The twin on a recorded run's own traffic: the recording as the workload (RecordingWorkload) with
// the run's scenario, policy, knobs and seed as recorded - the twin's replay of the run, what
// `calibrate check --against` runs - or with another policy and knobs over them (a counterfactual).
// The twin's run is recorded to a .kvrec, so the console can draw it beside the run.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/RunSummary.h"

namespace kvscope {

struct TwinReplaySpec {
  std::string recording;                // the run, a .kvrec
  std::string scenario;                 // empty: the recorded one (it must be bundled here or a file)
  std::string policy;                   // empty: the recorded one
  std::map<std::string, double> knobs;  // over the recorded knobs
  std::optional<std::uint64_t> seed;    // empty: the recorded one
};

struct TwinReplayResult {
  RunSummary summary;
  std::string scenario, policy;  // what ran
  // What the twin kept and what it had to model, and the run's own changes it did not follow.
  std::vector<std::string> notes;
};

// "leastwork K=200": the policy and the knobs that differ from the recording's, for names and titles.
std::string describeTwinReplay(const TwinReplaySpec& spec);

// A real cluster's run (recorded live or imported) is replayed for this long past its last event, so
// the requests in flight at its end can finish.
inline constexpr double kDrainS = 600;

// Runs it in this thread, recording to `out_kvrec`. Throws InputError
// on a recording, scenario, policy or knob that cannot be used, before any work; `progress`
// (fraction 0..1) about every simulated minute.
TwinReplayResult runTwinReplay(const TwinReplaySpec& spec, const std::string& out_kvrec,
                               const std::function<void(double)>& progress = {});

}  // namespace kvscope
