#include "core/router/policies/UnifiedPolicy.h"

#include <algorithm>
#include <limits>

#include "core/router/policies/LabProxyView.h"

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::DecodeIterationS, KnobId::Throughput,       KnobId::OverloadFactor,
                             KnobId::CacheView,        KnobId::ProxyBlockTokens, KnobId::ProxyLruBlocks};
constexpr ScoreComponentSpec kComponents[] = {
    {"contention_s", "s", "num_requests * decode_iteration_s"},
    {"queue_s", "s", "Pending prefill tokens / throughput"},
    {"prefill_s", "s", "Uncached input tokens / throughput"},
    {"affinity", "flag", "1 on the session's affinity instance"},
    {"gate1", "flag", "1 when the affinity instance's ongoing tokens <= average * overload_factor"},
    {"gate2", "flag", "1 when the affinity instance's cost <= best cost * overload_factor"},
};
}  // namespace

const PolicySpec UnifiedPolicy::kSpec{
    .name = "unified",
    .description =
        "Unified additive cost (contention + prefill queue + new prefill, in seconds) with gated session affinity",
    .origin = "the lab's seed 004 (agentic-kvc MIGRATION_POLICY_DESIGN)",
    .lower_is_better = true,
    .reads_cache_view = true,
    .knobs = kKnobs,
    .components = kComponents,
    .tie_break = "the lowest worker index",
    .override_rule = "unified keeps the session's affinity instance while gate1 and gate2 both pass",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<UnifiedPolicy>(); },
};

void UnifiedPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const double iteration_s = ctx.knobs.get(KnobId::DecodeIterationS);
  const double throughput = ctx.knobs.get(KnobId::Throughput);  // the registry keeps it >= 1
  const double overload = ctx.knobs.get(KnobId::OverloadFactor);
  const auto n = static_cast<WorkerId>(ctx.workers.size());

  double min_cost = std::numeric_limits<double>::infinity();
  double ongoing_sum = 0;
  thread_local std::vector<std::int64_t> ongoing;  // per decision; kept to allocate nothing
  ongoing.assign(ctx.workers.size(), 0);
  int alive = 0;
  out.candidates.reserve(ctx.workers.size());
  for (WorkerId w = 0; w < n; ++w) {
    const WorkerLoad& load = ctx.workers[w];
    const LabInstance lab = labInstance(ctx, w);
    const double contention = static_cast<double>(lab.num_requests) * iteration_s;
    const double queue = static_cast<double>(lab.pending_prefill_tokens) / throughput;
    const double prefill = static_cast<double>(lab.new_uncached_tokens) / throughput;
    CandidateScore c;
    c.worker = w;
    c.eligible = load.alive;
    c.score = contention + queue + prefill;
    c.add("contention_s", contention);
    c.add("queue_s", queue);
    c.add("prefill_s", prefill);
    c.add("affinity", w == ctx.bound_worker ? 1.0 : 0.0);
    out.candidates.push_back(c);
    if (load.alive) {
      min_cost = std::min(min_cost, c.score);
      ongoing_sum += static_cast<double>(lab.ongoing_tokens);
      ongoing[w] = lab.ongoing_tokens;
      ++alive;
    }
  }

  // The affinity instance is kept only while it is neither overloaded in context (gate 1) nor much
  // slower than the best instance (gate 2); otherwise its cache is not worth the wait.
  const WorkerId a = ctx.bound_worker;
  const bool has_affinity = a >= 0 && a < n && ctx.workers[a].alive;
  bool keep_affinity = false;
  for (CandidateScore& c : out.candidates) {
    double gate1 = 0, gate2 = 0;
    if (has_affinity && c.worker == a) {
      const double avg_ongoing = ongoing_sum / alive;
      gate1 = static_cast<double>(ongoing[a]) <= avg_ongoing * overload ? 1 : 0;
      gate2 = c.score <= min_cost * overload ? 1 : 0;
      keep_affinity = gate1 == 1 && gate2 == 1;
    }
    c.add("gate1", gate1);
    c.add("gate2", gate2);
  }

  sortCandidates(out.candidates, [&](const CandidateScore& x, const CandidateScore& y) {
    if (x.eligible != y.eligible) return x.eligible;
    if (x.eligible) {
      if (keep_affinity && (x.worker == a) != (y.worker == a)) return x.worker == a;
      if (x.score != y.score) return x.score < y.score;
    }
    return x.worker < y.worker;
  });
}

}  // namespace kvscope
