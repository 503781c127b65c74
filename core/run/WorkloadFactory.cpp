#include "core/run/WorkloadFactory.h"

#include "core/trace/TraceLoader.h"
#include "core/workload/SyntheticAgenticGenerator.h"

namespace kvscope {

Workload buildWorkload(const Scenario& scenario, std::uint64_t seed, const std::string& trace_override, bool lenient) {
  const auto& spec = scenario.workload;
  if (trace_override.empty() && spec.kind == WorkloadSpec::Kind::Synthetic)
    return SyntheticAgenticGenerator::generate(spec.synthetic, seed);
  TraceOptions options;
  options.lenient = lenient || spec.lenient;
  Workload w = loadTrace(trace_override.empty() ? spec.trace_path : trace_override, options);
  if (spec.max_sessions > 0 && static_cast<long>(w.sessions.size()) > spec.max_sessions)
    w.sessions.resize(static_cast<std::size_t>(spec.max_sessions));
  return w;
}

}  // namespace kvscope
