#pragma once
// The typed knob registry: specs, current values, validated all-or-nothing changes.
#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/knobs/Knob.h"

namespace kvscope {

class KnobRegistry {
 public:
  KnobRegistry();

  static std::span<const KnobSpec> specs();
  static const KnobSpec& spec(KnobId id);
  static std::optional<KnobId> find(std::string_view name);

  double get(KnobId id) const { return values_[static_cast<std::size_t>(id)]; }
  long getInt(KnobId id) const { return static_cast<long>(get(id)); }

  // Validates every change first; applies all of them or none. On error returns a message naming the
  // field and the valid range (or listing the valid knob names) and leaves the values untouched.
  // On success returns one KnobChanged per value that actually changed, tagged with the author (label and origin).
  struct Result {
    bool ok = true;
    std::string error;
    std::vector<KnobChanged> changes;
  };
  Result apply(const std::map<std::string, double>& changes, const ChangeAuthor& author);

  // Parses "NAME=VALUE" (as given to --set) into the map; returns an error message on bad syntax.
  static std::optional<std::string> parseAssignment(std::string_view text, std::map<std::string, double>& into);

  static std::string validNames();

 private:
  std::array<double, static_cast<std::size_t>(KnobId::Count)> values_{};
};

}  // namespace kvscope
