#pragma once
// What a paired comparison lets the lab claim at a stated significance level.
#include <string_view>

namespace kvscope {

enum class Verdict {
  Significant,     // p < level
  NotSignificant,  // p >= level with pairs enough to reach it, or no pair differs at all
  NeedsMoreSeeds,  // the pairs that differ are too few for any outcome to reach the level: claim nothing
};

// "significant", "not significant", "needs more seeds" (PairedComparison::verdictText says how many).
std::string_view toString(Verdict v);

}  // namespace kvscope
