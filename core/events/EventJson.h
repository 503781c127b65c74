#pragma once
// Events as JSON objects (one per line in --events files and `export --format jsonl`).
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/events/Event.h"

namespace kvscope {

nlohmann::json eventToJson(const Event& e);

}  // namespace kvscope
