#include "core/router/policies/LinearPolicy.h"

#include "core/router/policies/LabProxyView.h"

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::LinearCacheAlpha, KnobId::OverloadFactor, KnobId::CacheView,
                             KnobId::ProxyBlockTokens, KnobId::ProxyLruBlocks};
constexpr ScoreComponentSpec kComponents[] = {
    {"ongoing_tokens", "tokens", "Input tokens of the requests the router sent there and has not seen finish"},
    {"cache_hit", "tokens", "Prompt tokens cached there, as cache_view sees them"},
    {"affinity", "flag", "1 on the session's affinity instance"},
    {"overloaded", "flag", "1 when the affinity instance's ongoing tokens exceed average x overload_factor"},
};
}  // namespace

const PolicySpec LinearPolicy::kSpec{
    .name = "linear",
    .description =
        "The lab's linear cost: ongoing_tokens - alpha x cache hit, with session affinity under an "
        "overload gate",
    .origin = "gahow/agentic-kvc scripts/cache_aware_proxy.py @ ea5149726cdeacadb20a761eff9f4fb26bb13f28",
    .lower_is_better = true,
    .reads_cache_view = true,
    .knobs = kKnobs,
    .components = kComponents,
    .tie_break = "linear gives a tie to the lowest worker index",
    .override_rule =
        "linear keeps the session on its affinity instance unless that instance is overloaded, and then "
        "takes the one with the fewest ongoing tokens",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<LinearPolicy>(); },
};

void LinearPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const double alpha = ctx.knobs.get(KnobId::LinearCacheAlpha);
  const double overload = ctx.knobs.get(KnobId::OverloadFactor);
  const auto n = static_cast<WorkerId>(ctx.workers.size());

  double ongoing_sum = 0;
  int alive = 0;
  WorkerId best = kNoWorker, least_loaded = kNoWorker;
  std::vector<LabInstance> lab(ctx.workers.size());
  for (WorkerId w = 0; w < n; ++w) {
    lab[w] = labInstance(ctx, w);
    const double score =
        static_cast<double>(lab[w].ongoing_tokens) - alpha * static_cast<double>(lab[w].cache_hit_tokens);
    CandidateScore c;
    c.worker = w;
    c.eligible = ctx.workers[w].alive;
    c.score = score;
    c.add("ongoing_tokens", static_cast<double>(lab[w].ongoing_tokens));
    c.add("cache_hit", static_cast<double>(lab[w].cache_hit_tokens));
    out.candidates.push_back(c);
    if (!c.eligible) continue;
    ongoing_sum += static_cast<double>(lab[w].ongoing_tokens);
    ++alive;
    if (best == kNoWorker || score < out.candidates[best].score) best = w;
    if (least_loaded == kNoWorker || lab[w].ongoing_tokens < lab[least_loaded].ongoing_tokens) least_loaded = w;
  }

  const WorkerId a = ctx.bound_worker;
  const bool has_affinity = a >= 0 && a < n && ctx.workers[a].alive;
  bool overloaded = false;
  WorkerId chosen = best;
  if (has_affinity) {
    overloaded = static_cast<double>(lab[a].ongoing_tokens) > ongoing_sum / alive * overload;
    chosen = overloaded ? least_loaded : a;
  }
  for (CandidateScore& c : out.candidates) {
    c.add("affinity", has_affinity && c.worker == a ? 1.0 : 0.0);
    c.add("overloaded", has_affinity && c.worker == a && overloaded ? 1.0 : 0.0);
  }
  orderCandidates(out, chosen, /*lower_is_better=*/true);
}

}  // namespace kvscope
