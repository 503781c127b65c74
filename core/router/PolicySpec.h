#pragma once
// What the product knows of a routing policy besides its code: the CLI name, a one-line
// description, where it comes from, the knobs it reads, its score components with their units, how
// it orders equal scores, and its factory. Every policy has exactly one spec, defined in its own
// file next to its code; PolicyRegistry.cpp lists them, one line each. `kvscope-cli policies`, the
// console's policy menu and decision inspector, sweeps, scenarios, the Control service and the
// Prometheus labels all read the registry, so a new policy is its own file plus one registry line
// (docs/ARCHITECTURE.md, "How to add a policy").
#include <memory>
#include <span>
#include <string_view>

#include "core/knobs/Knob.h"

namespace kvscope {

class RoutingPolicy;

// One score component a policy reports for every candidate (RouteDecision's named components).
struct ScoreComponentSpec {
  std::string_view name;
  std::string_view unit;
  std::string_view help;
};

struct PolicySpec {
  std::string_view name;         // the CLI name: "lmetric", "kv-aware", ...
  std::string_view description;  // one line
  std::string_view origin;       // whose code it follows, with file and commit where there is one
  bool lower_is_better = true;
  bool control = false;  // a control arm (load alone, sticky, rotation) in the lab's studies
  // The kv-aware family retries its runner-up only within `epsilon` of the best score.
  bool retries_within_epsilon = false;
  // Reads the distinct blocks of the router's active sequences (costly to keep: off unless needed).
  bool reads_active_blocks = false;
  // Reads cache hits through the knob cache_view (the lab's proxy policies: LabProxyView.h), so the
  // router keeps its proxy LRU (ProxyBlockCache.h) while it is selected.
  bool reads_cache_view = false;
  std::span<const KnobId> knobs;  // its own knobs; KnobScope::Shared knobs apply under every policy
  std::span<const ScoreComponentSpec> components;
  std::string_view tie_break;      // how equal scores are ordered
  std::string_view override_rule;  // when the chosen worker may not have the best score ("" = never)
  std::unique_ptr<RoutingPolicy> (*make)() = nullptr;

  bool reads(KnobId id) const;  // its own knob, or a shared one
  const ScoreComponentSpec* component(std::string_view component_name) const;
};

}  // namespace kvscope
