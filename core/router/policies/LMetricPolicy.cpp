#include "core/router/policies/LMetricPolicy.h"

#include "core/router/policies/LabProxyView.h"

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::CacheView, KnobId::ProxyBlockTokens, KnobId::ProxyLruBlocks};
}  // namespace

const PolicySpec LMetricPolicy::kSpec{
    .name = "lmetric",
    .description =
        "LMetric as the lab's proxy runs it: (pending prefill + new prefill tokens) x num_requests, the "
        "minimum wins; no affinity",
    .origin = "gahow/agentic-kvc analysis/characterization/b3_policies_pseudocode.md @ 08530b3915",
    .lower_is_better = true,
    .reads_cache_view = true,
    .knobs = kKnobs,
    .components = kLabComponents,
    .tie_break = "lmetric gives a tie to the lowest worker index (with every worker idle every score is 0: worker 0)",
    .override_rule = "",  // "": the chosen worker has the best score
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<LMetricPolicy>(); },
};

void LMetricPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  orderCandidates(out, appendLmetricCandidates(ctx, out), /*lower_is_better=*/true);
}

}  // namespace kvscope
