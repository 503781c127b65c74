#include "core/router/policies/StickyPolicy.h"

#include "core/router/policies/LabProxyView.h"

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::CacheView, KnobId::ProxyBlockTokens, KnobId::ProxyLruBlocks};
}  // namespace

const PolicySpec StickyPolicy::kSpec{
    .name = "sticky",
    .description = "The lab's control: hard session affinity; a session's first turn is placed by LMetric",
    .origin = "gahow/agentic-kvc v2/exp_d_policy_dispatch @ 0b180c19 (sticky)",
    .lower_is_better = true,
    .control = true,
    .reads_cache_view = true,
    .knobs = kKnobs,
    .components = kLabComponents,
    .tie_break = "sticky places a new session like lmetric: a tie goes to the lowest worker index",
    .override_rule = "sticky keeps a session on its affinity instance whatever its score",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<StickyPolicy>(); },
};

void StickyPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const WorkerId best = appendLmetricCandidates(ctx, out);
  const WorkerId a = ctx.bound_worker;
  const bool has_affinity = a >= 0 && a < static_cast<WorkerId>(ctx.workers.size()) && ctx.workers[a].alive;
  orderCandidates(out, has_affinity ? a : best, /*lower_is_better=*/true);
}

}  // namespace kvscope
