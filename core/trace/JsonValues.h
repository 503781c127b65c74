#pragma once
// Small helpers shared by the JSON trace readers: what a bad value looked like (short enough for
// one line of error) and integral numbers as Python writers produce them (3.0 counts as 3).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvscope {

std::string describeJsonValue(const nlohmann::json& v);
std::optional<std::int64_t> jsonIntegral(const nlohmann::json& v);
// Appends a `hash_ids` array's block ids to `out`; returns the index of the first element that is
// not an integer >= 0 (the ids before it are appended), or nothing when all are.
std::optional<std::size_t> appendHashIds(const nlohmann::json& ids, std::vector<std::uint64_t>& out);

}  // namespace kvscope
