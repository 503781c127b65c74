#pragma once
// One diagnosed failure mode: which, when, the numbers that show it, and what to do about it.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kvscope {

// A knob fix that needs new sessions can act while sessions start: one did within this window.
inline constexpr double kNewSessionsWindowS = 300;

struct Finding {
  std::string mode;  // "A", "B", "C", "C'", "D"
  std::string name;
  std::vector<std::string> subjects;  // the workers or links it concerns ("D2", "P0->D1"); may be empty
  double window_start_s = 0;
  double window_end_s = 0;
  std::string evidence;
  std::string suggestion;  // the mitigation knob and the real fix, from the lab's taxonomy
  // The mitigation as knob values the console can preview and apply (empty where the fix is not a
  // knob, e.g. a code hotfix or the eviction granularity).
  std::map<std::string, double> fix_knobs;
  // The knob fix acts only on sessions that start after it: a session is bound to its decode worker
  // once (K and the other scores move new bindings). With none starting, the fix changes nothing.
  bool fix_needs_new_sessions = false;
  // The real fix when it is a routing policy (B: "exclusive-overlap"): what the console offers
  // when the knob fix can no longer act.
  std::string fix_policy;
  // It held at some point of the run and no longer does; window_end_s is when it stopped. Kept on
  // the list, so a cold D that recovered or a cascade that passed stays on record with its times.
  bool resolved = false;

  // The subjects for one line of a report or a table cell: the first `named`, then how many more
  // ("D0, D1, D2 and 46 more"); a finding on a large cluster can concern dozens of workers.
  std::string subjectsText(std::size_t named = 6) const {
    std::string out;
    for (std::size_t i = 0; i < subjects.size() && i < named; ++i) out += (i ? ", " : "") + subjects[i];
    if (subjects.size() > named) out += " and " + std::to_string(subjects.size() - named) + " more";
    return out;
  }
};

}  // namespace kvscope
