#pragma once
// The runs of a sweep (or of recordings given to `compare`), arranged as grid points x seeds: what
// SweepAnalysis turns into the tables. Plain data.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics/RunSummary.h"
#include "core/sweep/SweepPoint.h"

namespace kvscope {

struct SweepData {
  std::string heading = "Sweep";  // "Sweep" or "Comparison": the first line of summary.md
  std::string scenario;
  std::vector<SweepPoint> points;
  std::vector<std::uint64_t> seeds;                          // column k of `runs` ran seed seeds[k]
  std::vector<std::vector<std::optional<RunSummary>>> runs;  // [point][seed]; empty when missing
  std::vector<std::vector<std::string>> recordings;          // [point][seed] file names (may be empty)
  std::size_t baseline = 0;
  // Runs pair up by seed (a sweep always; recordings when every point has the same seeds). Unpaired
  // data gets intervals and changes but no paired test.
  bool paired = true;
  double level = 0.05;
  std::vector<std::string> notes;  // said under the tables (how points were formed, what is missing)
};

}  // namespace kvscope
