#include "core/run/WorkloadFactory.h"

#include <algorithm>

#include "core/model/Error.h"
#include "core/trace/TraceLoader.h"
#include "core/workload/SyntheticAgenticGenerator.h"

namespace kvscope {

Workload buildWorkload(const Scenario& scenario, std::uint64_t seed, const std::string& trace_override, bool lenient) {
  const auto& spec = scenario.workload;
  if (trace_override.empty() && spec.kind == WorkloadSpec::Kind::Synthetic) {
    // Trace times as a recording has them: each turn after the previous one's service on this
    // profile and its think time (what tracets and open dispatch read; closed and thinktime do not).
    const HardwareProfile& p = scenario.profile;
    const RecordedService service{p.prefill_tokens_per_s,           p.prefill_overhead_s,
                                  p.prefill_per_context_token_s,    p.decode_iteration_base_s,
                                  p.decode_iteration_per_request_s, p.decode_iteration_per_context_token_s};
    Workload w = SyntheticAgenticGenerator::generate(spec.synthetic, seed, 1, service);
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
