#include "core/router/policies/LoadOnlyPolicy.h"

#include "core/router/policies/LabProxyView.h"

namespace kvscope {

namespace {
constexpr ScoreComponentSpec kComponents[] = {
    {"pending_prefill", "tokens", "Uncached tokens of the requests the router sent there that have no first token yet"},
    {"input_tokens", "tokens", "This prompt's tokens, all counted as new (no cache)"},
    {"num_requests", "requests", "Requests the router sent there and has not seen finish"},
};
}  // namespace

const PolicySpec LoadOnlyPolicy::kSpec{
    .name = "load-only",
    .description = "The lab's control: load alone, (pending prefill + input) x num_requests; no cache, no affinity",
    .origin = "gahow/agentic-kvc analysis/characterization/b3_policies_pseudocode.md @ 08530b3915 (load_only)",
    .lower_is_better = true,
    .control = true,
    .knobs = {},  // none of its own
    .components = kComponents,
    .tie_break = "load-only gives a tie to the lowest worker index",
    .override_rule = "",  // "": the chosen worker has the best score
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<LoadOnlyPolicy>(); },
};

void LoadOnlyPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const auto input = static_cast<double>(std::max<std::int32_t>(0, ctx.request.input_tokens));
  WorkerId best = kNoWorker;
  for (WorkerId w = 0; w < static_cast<WorkerId>(ctx.workers.size()); ++w) {
    const LabInstance lab = labInstance(ctx, w);
    CandidateScore c;
    c.worker = w;
    c.eligible = ctx.workers[w].alive;
    c.score = (static_cast<double>(lab.pending_prefill_tokens) + input) * static_cast<double>(lab.num_requests);
    c.add("pending_prefill", static_cast<double>(lab.pending_prefill_tokens));
    c.add("input_tokens", input);
    c.add("num_requests", static_cast<double>(lab.num_requests));
    out.candidates.push_back(c);
    if (c.eligible && (best == kNoWorker || c.score < out.candidates[best].score)) best = w;
  }
  orderCandidates(out, best, /*lower_is_better=*/true);
}

}  // namespace kvscope
