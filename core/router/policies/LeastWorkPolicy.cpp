#include "core/router/policies/LeastWorkPolicy.h"

#include "core/router/policies/LabProxyView.h"

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::CacheView, KnobId::ProxyBlockTokens, KnobId::ProxyLruBlocks};
constexpr KnobId kKappaKnobs[] = {KnobId::LeastworkKappa, KnobId::CacheView, KnobId::ProxyBlockTokens,
                                  KnobId::ProxyLruBlocks};
constexpr ScoreComponentSpec kKappaComponents[] = {
    kLabComponents[0],
    kLabComponents[1],
    kLabComponents[2],
    kLabComponents[3],
    {"ongoing_decode", "tokens", "Input tokens of the requests there past their first token (kappa's decode load)"},
};
constexpr std::string_view kTieBreak = "fewest num_requests, then the router's round-robin among the still tied";
}  // namespace

const PolicySpec LeastWorkPolicy::kSpec{
    .name = "leastwork",
    .description = "The lab's LPWL: least prefill work left (pending prefill + new prefill tokens); no knobs",
    .origin = "gahow/agentic-kvc scripts/cache_aware_proxy.py @ d9046322c66597d9d926480d3350c192c7392d1c",
    .lower_is_better = true,
    .reads_cache_view = true,
    .knobs = kKnobs,
    .components = kLabComponents,
    .tie_break = kTieBreak,
    .override_rule = "leastwork breaks ties by fewest num_requests, then round-robin",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<LeastWorkPolicy>(false); },
};

const PolicySpec LeastWorkPolicy::kKappaSpec{
    .name = "leastwork-kappa",
    .description = "leastwork times (1 + kappa x ongoing decode tokens): the lab's decode-interference ablation",
    .origin = "gahow/agentic-kvc scripts/cache_aware_proxy.py @ a0db3cbe7713c8a1a93181bee4f14bd664c00415",
    .lower_is_better = true,
    .reads_cache_view = true,
    .knobs = kKappaKnobs,
    .components = kKappaComponents,
    .tie_break = kTieBreak,
    .override_rule = "leastwork-kappa breaks ties by fewest num_requests, then round-robin",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<LeastWorkPolicy>(true); },
};

void LeastWorkPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const double kappa = kappa_ ? ctx.knobs.get(KnobId::LeastworkKappa) : 0.0;
  const auto n = static_cast<WorkerId>(ctx.workers.size());
  std::vector<std::int64_t> requests(ctx.workers.size(), 0);
  for (WorkerId w = 0; w < n; ++w) {
    const LabInstance lab = labInstance(ctx, w);
    CandidateScore& c = out.candidates.emplace_back(labCandidate(ctx, w, lab));
    const double work = static_cast<double>(lab.pending_prefill_tokens + lab.new_uncached_tokens);
    c.score = kappa_ ? work * (1.0 + kappa * static_cast<double>(lab.ongoing_decode_tokens)) : work;
    if (kappa_) c.add("ongoing_decode", static_cast<double>(lab.ongoing_decode_tokens));
    requests[w] = lab.num_requests;
  }
  // argmin of (score, num_requests); the round-robin only among what is still tied.
  std::vector<WorkerId> tied;
  for (const CandidateScore& c : out.candidates) {
    if (!c.eligible) continue;
    if (!tied.empty()) {
      const CandidateScore& t = out.candidates[tied.front()];
      if (c.score > t.score || (c.score == t.score && requests[c.worker] > requests[t.worker])) continue;
      if (c.score < t.score || requests[c.worker] < requests[t.worker]) tied.clear();
    }
    tied.push_back(c.worker);
  }
  const WorkerId chosen =
      tied.size() > 1 ? roundRobinAmong(tied, round_robin_) : (tied.empty() ? kNoWorker : tied.front());
  orderCandidates(out, chosen, /*lower_is_better=*/true);
}

}  // namespace kvscope
