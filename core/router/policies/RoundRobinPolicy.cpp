#include "core/router/policies/RoundRobinPolicy.h"

namespace kvscope {

namespace {
constexpr ScoreComponentSpec kComponents[] = {
    {"rotation_offset", "position", "Position in the round-robin rotation"},
};
}  // namespace

const PolicySpec RoundRobinPolicy::kSpec{
    .name = "round-robin",
    .description = "Round-robin over the alive workers",
    .origin = "KVScope's rotation control (its `linear` until the lab's linear cost was implemented)",
    .lower_is_better = true,
    .control = true,
    .knobs = {},  // none of its own
    .components = kComponents,
    .tie_break = "no ties: every worker has its own rotation position",
    .override_rule = "",  // "": the chosen worker has the best score
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<RoundRobinPolicy>(); },
};

void RoundRobinPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const auto n = static_cast<WorkerId>(ctx.workers.size());
  if (n == 0) return;
  // The rotation position comes from the router's decision counter, so the policy stays stateless
  // and a replayed run rotates identically.
  const auto start = static_cast<WorkerId>(ctx.decision_index % static_cast<std::uint64_t>(n));
  out.candidates.reserve(ctx.workers.size());
  // Alive workers in rotation order first, then the dead ones (in rotation order too).
  for (int pass = 0; pass < 2; ++pass) {
    const bool alive_pass = pass == 0;
    for (WorkerId k = 0; k < n; ++k) {
      const WorkerId w = (start + k) % n;
      if (ctx.workers[w].alive != alive_pass) continue;
      CandidateScore c;
      c.worker = w;
      c.eligible = alive_pass;
      c.score = static_cast<double>(out.candidates.size());
      c.add("rotation_offset", k);
      out.candidates.push_back(c);
    }
  }
}

}  // namespace kvscope
