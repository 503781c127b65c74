#include "core/stats/Verdict.h"

namespace kvscope {

std::string_view toString(Verdict v) {
  switch (v) {
    case Verdict::Significant:
      return "significant";
    case Verdict::NotSignificant:
      return "not significant";
    case Verdict::NeedsMoreSeeds:
      return "needs more seeds";
  }
  return "?";
}

}  // namespace kvscope
