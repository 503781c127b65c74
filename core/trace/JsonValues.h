#pragma once
// Small helpers shared by the JSON trace readers: what a bad value looked like (short enough for
// one line of error) and integral numbers as Python writers produce them (3.0 counts as 3).
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kvscope {

std::string describeJsonValue(const nlohmann::json& v);
std::optional<std::int64_t> jsonIntegral(const nlohmann::json& v);

}  // namespace kvscope
