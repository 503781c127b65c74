#pragma once
// A JSON parser callback that stops at a key given twice in one object: nlohmann keeps the
// last one silently, so `"K": 0, ..., "K": 200` would run with 200 while the reader saw 0. Used by
// the human-edited files (scenarios, profiles, sweep files).
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvscope {

struct DuplicateJsonKey : std::runtime_error {
  explicit DuplicateJsonKey(const std::string& key) : std::runtime_error(key), key_(key) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// For J::parse(text, rejectDuplicateKeys<J>(), ...): throws DuplicateJsonKey from the parse.
template <class J>
typename J::parser_callback_t rejectDuplicateKeys() {
  auto objects = std::make_shared<std::vector<std::set<std::string>>>();
  return [objects](int, typename J::parse_event_t event, J& parsed) {
    switch (event) {
      case J::parse_event_t::object_start:
        objects->emplace_back();
        break;
      case J::parse_event_t::object_end:
        if (!objects->empty()) objects->pop_back();
        break;
      case J::parse_event_t::key: {
        const auto& key = parsed.template get_ref<const typename J::string_t&>();
        if (!objects->empty() && !objects->back().insert(key).second) throw DuplicateJsonKey(key);
        break;
      }
      default:
        break;
    }
    return true;
  };
}

}  // namespace kvscope
