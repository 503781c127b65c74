#include "core/router/policies/UnifiedGatedPolicy.h"

#include <algorithm>
#include <tuple>

#include "core/router/policies/LabProxyView.h"

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::OverloadFactor, KnobId::CacheRatioGate,   KnobId::LmetricDecodeWeight,
                             KnobId::CacheView,      KnobId::ProxyBlockTokens, KnobId::ProxyLruBlocks};
enum TieBreak { kNoTie = 0, kNewUncached = 1, kNumRequests = 2, kRoundRobin = 3 };
}  // namespace

const PolicySpec UnifiedGatedPolicy::kSpec{
    .name = "unified-gated",
    .description =
        "The lab's later unified: gated session affinity (cache ratio and load), else an LMetric fallback "
        "with tie-breaks",
    .origin = "gahow/agentic-kvc scripts/cache_aware_proxy.py @ ac6534c3ff57e6d10281a7c28841957371570a0c",
    .lower_is_better = true,
    .reads_cache_view = true,
    .knobs = kKnobs,
    .components = kLabComponents,
    .tie_break = "the LMetric fallback breaks ties by new_uncached, then num_requests, then round-robin",
    .override_rule = "unified-gated keeps the session's affinity instance while its cache ratio and load gates pass",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<UnifiedGatedPolicy>(); },
};

void UnifiedGatedPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const double overload = ctx.knobs.get(KnobId::OverloadFactor);
  const double gate = ctx.knobs.get(KnobId::CacheRatioGate);
  const double decode_weight = ctx.knobs.get(KnobId::LmetricDecodeWeight);
  const auto n = static_cast<WorkerId>(ctx.workers.size());
  const auto input = static_cast<double>(std::max<std::int32_t>(0, ctx.request.input_tokens));

  std::vector<LabInstance> lab(ctx.workers.size());
  double requests_sum = 0;
  int alive = 0;
  for (WorkerId w = 0; w < n; ++w) {
    lab[w] = labInstance(ctx, w);
    CandidateScore& c = out.candidates.emplace_back(labCandidate(ctx, w, lab[w]));
    const double p = static_cast<double>(lab[w].pending_prefill_tokens + lab[w].new_uncached_tokens);
    if (decode_weight > 0)
      c.score = p * static_cast<double>(std::max<std::int64_t>(lab[w].num_requests, 1)) +
                decode_weight * static_cast<double>(lab[w].ongoing_decode_tokens);
    else
      c.score = p * static_cast<double>(lab[w].num_requests);
    if (!c.eligible) continue;
    requests_sum += static_cast<double>(lab[w].num_requests);
    ++alive;
  }
  const double avg_requests = alive > 0 ? requests_sum / alive : 0.0;

  const WorkerId a = ctx.bound_worker;
  const bool has_affinity = a >= 0 && a < n && ctx.workers[a].alive;
  double cache_ratio = 0;
  bool affinity = false;
  if (has_affinity) {
    cache_ratio = input > 0 ? static_cast<double>(lab[a].cache_hit_tokens) / input : 0.0;
    affinity = cache_ratio > gate && static_cast<double>(lab[a].num_requests) <= avg_requests * overload;
  }

  WorkerId chosen = kNoWorker;
  TieBreak tie = kNoTie;
  if (affinity) {
    chosen = a;
  } else {
    // Lexicographic (score, new_uncached, num_requests), then the round-robin among equals.
    const auto key = [&](WorkerId w) {
      return std::make_tuple(out.candidates[w].score, lab[w].new_uncached_tokens, lab[w].num_requests);
    };
    std::vector<WorkerId> tied;
    for (WorkerId w = 0; w < n; ++w) {
      if (!out.candidates[w].eligible) continue;
      if (!tied.empty() && key(w) > key(tied.front())) continue;
      if (!tied.empty() && key(w) < key(tied.front())) tied.clear();
      tied.push_back(w);
    }
    // Which key settled it: the first one on which the winner differs from a runner-up with its score.
    for (WorkerId w = 0; w < n && !tied.empty(); ++w) {
      const WorkerId t = tied.front();
      if (!out.candidates[w].eligible || w == t || out.candidates[w].score != out.candidates[t].score) continue;
      const TieBreak used = lab[w].new_uncached_tokens != lab[t].new_uncached_tokens ? kNewUncached
                            : lab[w].num_requests != lab[t].num_requests             ? kNumRequests
                                                                                     : kRoundRobin;
      tie = std::max(tie, used);
    }
    chosen = tied.size() > 1 ? roundRobinAmong(tied, round_robin_) : (tied.empty() ? kNoWorker : tied.front());
  }
  out.addField("decision", affinity ? 1.0 : 0.0);
  out.addField("affinity", has_affinity ? static_cast<double>(a) : -1.0);
  out.addField("cache_ratio", cache_ratio);
  out.addField("avg_num_requests", avg_requests);
  out.addField("tie_break", static_cast<double>(tie));
  orderCandidates(out, chosen, /*lower_is_better=*/true);
}

}  // namespace kvscope
