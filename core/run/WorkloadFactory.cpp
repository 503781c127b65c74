#include "core/run/WorkloadFactory.h"

#include <algorithm>

#include "core/model/Error.h"
#include "core/trace/TraceLoader.h"
#include "core/workload/SyntheticAgenticGenerator.h"

namespace kvscope {

Workload buildWorkload(const Scenario& scenario, std::uint64_t seed, const std::string& trace_override, bool lenient) {
  const auto& spec = scenario.workload;
  if (trace_override.empty() && spec.kind == WorkloadSpec::Kind::Synthetic) {
    Workload w = SyntheticAgenticGenerator::generate(spec.synthetic, seed);
    // A session whose first turn is already over max_context_tokens has no request; when none has
    // one, the run would be empty: said, not run silently.
    const bool any =
        std::any_of(w.sessions.begin(), w.sessions.end(), [](const Session& s) { return !s.turns.empty(); });
    if (!any && spec.synthetic.sessions > 0)
      throw InputError(scenario.name +
                       ": workload: no session has a request: every first turn (boilerplate_tokens + "
                       "first_turn_tokens) is longer than max_context_tokens (" +
                       std::to_string(spec.synthetic.max_context_tokens) + ")");
    return w;
  }
  TraceOptions options;
  options.lenient = lenient || spec.lenient;
  Workload w = loadTrace(trace_override.empty() ? spec.trace_path : trace_override, options);
  if (spec.max_sessions > 0 && static_cast<long>(w.sessions.size()) > spec.max_sessions)
    w.sessions.resize(static_cast<std::size_t>(spec.max_sessions));
  return w;
}

}  // namespace kvscope
