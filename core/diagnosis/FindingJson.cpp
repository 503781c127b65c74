#include "core/diagnosis/FindingJson.h"

#include <nlohmann/json.hpp>

namespace kvscope {

nlohmann::json findingJson(const Finding& f) {
  return {{"mode", f.mode},           {"name", f.name},
          {"subjects", f.subjects},   {"window_s", {f.window_start_s, f.window_end_s}},
          {"evidence", f.evidence},   {"suggestion", f.suggestion},
          {"fix_knobs", f.fix_knobs}, {"fix_policy", f.fix_policy},
          {"resolved", f.resolved}};
}

}  // namespace kvscope
