#pragma once
// Every routing policy a run can select, in the order menus and listings show them
// (PolicyRegistry.cpp: one line per policy; each spec lives beside its policy's code).
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/router/PolicySpec.h"

namespace kvscope {

std::span<const PolicySpec* const> policySpecs();
const PolicySpec* findPolicy(std::string_view name);  // nullptr for an unknown name
std::span<const std::string_view> policyNames();
// "a, b, c": the valid names, for error messages.
std::string policyNameList();
std::unique_ptr<RoutingPolicy> makePolicy(std::string_view name);  // nullptr for an unknown name
// The policies that read a policy knob (empty for a shared knob: every policy reads it).
std::vector<std::string_view> policiesReading(KnobId id);

}  // namespace kvscope
