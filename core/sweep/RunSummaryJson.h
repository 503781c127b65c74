#pragma once
// RunSummary back from the JSON that RunSummary::toJson() writes (a sweep's per-run summary files,
// a resumed sweep reading what is done). The inverse of toJson(): fromJson(s.toJson()).toJson() == s.toJson().
#include <nlohmann/json_fwd.hpp>

#include "core/metrics/RunSummary.h"

namespace kvscope {

class RunSummaryJson {
 public:
  // Throws nlohmann::json exceptions (type_error, out_of_range) on a summary of another shape.
  static RunSummary fromJson(const nlohmann::json& j);
};

}  // namespace kvscope
