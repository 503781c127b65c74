#include "core/trace/JsonValues.h"

#include <cmath>
#include <limits>

namespace kvscope {

using nlohmann::json;

std::string describeJsonValue(const json& v) {
  switch (v.type()) {
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::string: {
      std::string s = v.get_ref<const std::string&>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    default:
      return v.dump();
  }
}

std::optional<std::int64_t> jsonIntegral(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::trunc(d) == d && std::fabs(d) <= 9.0e15) return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

std::optional<std::size_t> appendHashIds(const json& ids, std::vector<std::uint64_t>& out) {
  out.reserve(out.size() + ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const json& h = ids[i];
    if (h.is_number_unsigned()) {
      out.push_back(h.get<std::uint64_t>());
    } else if (const auto n = jsonIntegral(h); n && *n >= 0) {
      out.push_back(static_cast<std::uint64_t>(*n));
    } else {
      return i;
    }
  }
  return std::nullopt;
}

}  // namespace kvscope
