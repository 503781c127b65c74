#pragma once
// One diagnosed failure mode: which, when, the numbers that show it, and what to do about it.
#include <map>
#include <string>
#include <vector>

namespace kvscope {

struct Finding {
  std::string mode;        // "A", "B", "C", "C'", "D"
  std::string name;
  std::vector<std::string> subjects;  // the workers or links it concerns ("D2", "P0->D1"); may be empty
  double window_start_s = 0;
  double window_end_s = 0;
  std::string evidence;
  std::string suggestion;  // the mitigation knob and the real fix, from the lab's taxonomy
  // The mitigation as knob values the console can preview and apply (empty where the fix is not a
  // knob, e.g. a code hotfix or the eviction granularity).
  std::map<std::string, double> fix_knobs;
};

}  // namespace kvscope
