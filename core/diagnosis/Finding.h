#pragma once
// One diagnosed failure mode: which, when, the numbers that show it, and what to do about it.
#include <string>

namespace kvscope {

struct Finding {
  std::string mode;        // "A", "B", "C", "C'", "D"
  std::string name;
  double window_start_s = 0;
  double window_end_s = 0;
  std::string evidence;
  std::string suggestion;  // the mitigation knob and the real fix, from the lab's taxonomy
};

}  // namespace kvscope
