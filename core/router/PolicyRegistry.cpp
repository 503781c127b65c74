// The registry of routing policies (docs/ARCHITECTURE.md D3): one line per policy, in the order
// menus and listings show them. A policy's spec (name, knobs, components, factory) sits beside its
// code in core/router/policies/.
#include "core/router/PolicyRegistry.h"

#include <algorithm>
#include <array>

#include "core/router/RoutingPolicy.h"
#include "core/router/policies/DynamoKvPolicy.h"
#include "core/router/policies/KvAwarePolicy.h"
#include "core/router/policies/LMetricPolicy.h"
#include "core/router/policies/LeastWorkPolicy.h"
#include "core/router/policies/LinearPolicy.h"
#include "core/router/policies/LoadOnlyPolicy.h"
#include "core/router/policies/RoundRobinPolicy.h"
#include "core/router/policies/SglangCacheAwarePolicy.h"
#include "core/router/policies/StickyPolicy.h"
#include "core/router/policies/UnifiedGatedPolicy.h"
#include "core/router/policies/UnifiedPolicy.h"

namespace kvscope {

namespace {

constexpr std::array kPolicies{
    // The lab's SGLang router (agentic-pd-hybrid) and its proposed fix.
    &KvAwarePolicy::kSpec,
    &KvAwarePolicy::kExclusiveSpec,
    // The lab's vLLM proxy (agentic-kvc scripts/cache_aware_proxy.py) and its controls.
    &LinearPolicy::kSpec,
    &LMetricPolicy::kSpec,
    &UnifiedPolicy::kSpec,
    &UnifiedGatedPolicy::kSpec,
    &LeastWorkPolicy::kSpec,
    &LeastWorkPolicy::kKappaSpec,
    &StickyPolicy::kSpec,
    &LoadOnlyPolicy::kSpec,
    &RoundRobinPolicy::kSpec,
    // The anchors: upstream routers as their code runs them.
    &SglangCacheAwarePolicy::kSpec,
    &DynamoKvPolicy::kSpec,
};

}  // namespace

bool PolicySpec::reads(KnobId id) const {
  return KnobRegistry::spec(id).scope == KnobScope::Shared || std::find(knobs.begin(), knobs.end(), id) != knobs.end();
}

const ScoreComponentSpec* PolicySpec::component(std::string_view component_name) const {
  for (const auto& c : components)
    if (c.name == component_name) return &c;
  return nullptr;
}

std::span<const PolicySpec* const> policySpecs() { return kPolicies; }

const PolicySpec* findPolicy(std::string_view name) {
  for (const PolicySpec* p : kPolicies)
    if (p->name == name) return p;
  return nullptr;
}

std::span<const std::string_view> policyNames() {
  static const auto names = [] {
    std::array<std::string_view, kPolicies.size()> out{};
    for (std::size_t i = 0; i < kPolicies.size(); ++i) out[i] = kPolicies[i]->name;
    return out;
  }();
  return names;
}

std::string policyNameList() {
  std::string out;
  for (const PolicySpec* p : kPolicies) {
    if (!out.empty()) out += ", ";
    out += p->name;
  }
  return out;
}

std::unique_ptr<RoutingPolicy> makePolicy(std::string_view name) {
  const PolicySpec* spec = findPolicy(name);
  return spec ? spec->make() : nullptr;
}

std::vector<std::string_view> policiesReading(KnobId id) {
  std::vector<std::string_view> out;
  if (KnobRegistry::spec(id).scope == KnobScope::Shared) return out;
  for (const PolicySpec* p : kPolicies)
    if (std::find(p->knobs.begin(), p->knobs.end(), id) != p->knobs.end()) out.push_back(p->name);
  return out;
}

}  // namespace kvscope
