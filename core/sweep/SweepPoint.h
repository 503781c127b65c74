#pragma once
// One point of a sweep's grid: the policy and knob values every seed of that point runs with.
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kvscope {

struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> coords;  // axis name -> value as written, in axis order
  std::string policy;                                       // empty: the scenario's
  std::string dispatch;                                     // empty: the sweep's or the scenario's
  std::map<std::string, double> knobs;                      // the grid's knob values at this point

  // "K=200,policy=kv-aware": how the tables name the point.
  std::string label() const;
  // "K=200_policy=kv-aware": the file name stem of its runs (no commas or slashes).
  std::string fileStem() const;
};

}  // namespace kvscope
