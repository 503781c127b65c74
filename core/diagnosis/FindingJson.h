#pragma once
// A finding as JSON, the same in a run's summary (RunSummary::toJson) and a webhook's post
// (FindingWebhook): mode, name, subjects, window_s [start, end], evidence, suggestion, fix_knobs,
// fix_policy ("" when the fix is not a routing policy), resolved.
#include <nlohmann/json_fwd.hpp>

#include "core/diagnosis/Finding.h"

namespace kvscope {

nlohmann::json findingJson(const Finding& f);

}  // namespace kvscope
