#pragma once
// What a paired comparison lets the lab claim at a stated significance level.
#include <string_view>

namespace kvscope {

enum class Verdict {
  Significant,     // p < level
  NotSignificant,  // p >= level (including "no difference at all")
  TooFewSeeds,     // not enough pairs for any test to mean something: claim nothing
};

std::string_view toString(Verdict v);

}  // namespace kvscope
