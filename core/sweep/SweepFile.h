#pragma once
// A sweep file: the same as the `sweep` flags, in the format of the scenario files (JSON with
// comments), so it can be kept beside them and edited by hand:
//
//   {
//     "scenario": "e3-load-floor",
//     "grid": { "K": [0, 50, 100, 200], "policy": ["kv-aware", "exclusive-overlap"] },
//     "seeds": 5,                       // or a list: [3, 7, 11]
//     "baseline": { "policy": "kv-aware", "K": 0 },
//     "knobs": { "rho": 0.9 },          // the same at every point
//     "duration_s": 1800, "jobs": 2, "level": 0.05
//   }
//
// Axes keep the file's order. A scenario file given by a relative path is looked up beside the sweep
// file first (then as `--scenario` does). Errors name the file, the line and the field.
#include <string>

#include "core/sweep/SweepSpec.h"

namespace kvscope {

class SweepFile {
 public:
  // Parses (does not validate: call SweepSpec::validate()). Throws InputError.
  static SweepSpec load(const std::string& path);
  static SweepSpec parse(const std::string& text, const std::string& path);
  // The spec as a sweep file that parses back to the same runs (a Slurm sweep keeps it as
  // DIR/sweep.json for its tasks). A scenario given as a relative file path is made absolute, since
  // the file is read from another directory (and by another process).
  static std::string text(const SweepSpec& spec);
};

}  // namespace kvscope
