#pragma once
// The workload a scenario asks for: generated (synthetic agentic sessions) or read from a trace.
#include <cstdint>
#include <string>

#include "core/model/Workload.h"
#include "core/scenario/Scenario.h"

namespace kvscope {

// `trace_override` (from --trace) replaces the scenario's workload with that trace file or
// directory. Throws InputError on bad input.
Workload buildWorkload(const Scenario& scenario, std::uint64_t seed, const std::string& trace_override = {},
                       bool lenient = false);

}  // namespace kvscope
