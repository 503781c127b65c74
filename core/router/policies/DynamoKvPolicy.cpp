#include "core/router/policies/DynamoKvPolicy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::OverlapScoreWeight, KnobId::RouterTemperature,  KnobId::DynamoCostForm,
                             KnobId::PrefillLoadScale,   KnobId::OverlapScoreCredit, KnobId::DecodeActiveRequestWeight};
constexpr ScoreComponentSpec kComponents[] = {
    {"prefill_blocks", "blocks", "Blocks of the prompt the worker would have to prefill"},
    {"decode_blocks", "blocks", "Blocks the worker holds for the requests the router tracks there"},
    {"overlap_blocks", "blocks", "The prompt's leading blocks the worker has cached"},
    {"tree_blocks", "blocks", "Blocks the router's indexer holds for the worker (the tie-break)"},
    {"probability", "fraction", "Chance of being sampled at router_temperature (1 on the argmin at 0)"},
};

// softmax_sample + select_worker: the worker picked among the alive ones by their logits (lo and hi
// the alive ones' extremes; lo > hi when none is alive), and each one's chance of being picked.
WorkerId selectWorker(const RouteContext& ctx, const std::vector<double>& logits, double lo, double hi,
                      double temperature, std::vector<double>& probability) {
  const auto n = static_cast<WorkerId>(ctx.workers.size());
  WorkerId picked = kNoWorker;
  if (lo <= hi && temperature <= 0) {
    // softmax_sample at temperature 0 returns every worker at the minimum; select_worker then
    // prefers the smaller tree and draws uniformly among equal trees.
    std::vector<WorkerId> tied;
    for (WorkerId w = 0; w < n; ++w)
      if (ctx.workers[w].alive && logits[w] == lo) tied.push_back(w);
    const auto tree = [&](WorkerId w) {
      return w < static_cast<WorkerId>(ctx.tree_blocks.size()) ? ctx.tree_blocks[w] : 0;
    };
    const bool same_tree =
        std::all_of(tied.begin(), tied.end(), [&](WorkerId w) { return tree(w) == tree(tied.front()); });
    if (tied.size() == 1 || !same_tree) {
      picked = *std::min_element(tied.begin(), tied.end(), [&](WorkerId a, WorkerId b) { return tree(a) < tree(b); });
    } else {
      const auto i =
          std::min(tied.size() - 1, static_cast<std::size_t>(ctx.uniform * static_cast<double>(tied.size())));
      picked = tied[i];
    }
    probability[picked] = 1.0;
  } else if (lo <= hi) {
    // softmax over -(logit - min) / ((max - min) x T); all equal -> uniform; inverse CDF with `<=`.
    double sum = 0;
    for (WorkerId w = 0; w < n; ++w) {
      if (!ctx.workers[w].alive) continue;
      probability[w] = hi == lo ? 1.0 : std::exp(-(logits[w] - lo) / ((hi - lo) * temperature));
      sum += probability[w];
    }
    double cdf = 0;
    WorkerId last_alive = kNoWorker;
    for (WorkerId w = 0; w < n; ++w) {
      if (!ctx.workers[w].alive) continue;
      probability[w] /= sum;
      cdf += probability[w];
      last_alive = w;
      if (picked == kNoWorker && ctx.uniform <= cdf) picked = w;
    }
    if (picked == kNoWorker) picked = last_alive;  // rounding left the CDF just under the draw
  }
  return picked;
}

}  // namespace

const PolicySpec DynamoKvPolicy::kSpec{
    .name = "dynamo-kv",
    .description = "NVIDIA Dynamo's KV router: overlap_score_weight x prefill blocks + decode blocks, the minimum wins",
    .origin = "ai-dynamo lib/llm/src/kv_router/scheduler.rs @ db19bd2a659d4cb04998fb4101cd0dbfbbeba9d4",
    .lower_is_better = true,
    .reads_active_blocks = true,
    .knobs = kKnobs,
    .components = kComponents,
    .tie_break = "dynamo-kv gives a tie to the smaller tree, then draws uniformly",
    .override_rule = "dynamo-kv samples by probability when router_temperature > 0",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<DynamoKvPolicy>(); },
};

void DynamoKvPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const bool newer = ctx.knobs.getInt(KnobId::DynamoCostForm) == 1;
  const double temperature = ctx.knobs.get(KnobId::RouterTemperature);
  const double block_size = std::max(1, ctx.block_size);
  const std::int64_t isl = std::max<std::int32_t>(0, ctx.request.input_tokens);
  const auto n = static_cast<WorkerId>(ctx.workers.size());
  // The decode router of disaggregated serving: no overlap credit, no prefill tracking.
  const double weight = ctx.disaggregated ? 0.0 : ctx.knobs.get(KnobId::OverlapScoreWeight);
  const double credit = ctx.disaggregated ? 0.0 : ctx.knobs.get(KnobId::OverlapScoreCredit);
  const double scale = ctx.knobs.get(KnobId::PrefillLoadScale);
  const double per_request = ctx.knobs.get(KnobId::DecodeActiveRequestWeight);

  std::vector<double> logits(ctx.workers.size(), 0.0);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (WorkerId w = 0; w < n; ++w) {
    const std::int64_t overlap = w < kMaxWorkers ? ctx.match.prefix_blocks[w] : 0;
    const bool tracked = ctx.active && w < static_cast<WorkerId>(ctx.workers.size());
    const std::int64_t active_tokens = tracked && !ctx.disaggregated ? ctx.active->activeTokens(w) : 0;
    const double decode_blocks =
        tracked ? static_cast<double>(ctx.active->activeBlocks(w) + ctx.active->newBlocks(w, ctx.request.hashes))
                : static_cast<double>(ctx.request.hashes.size());
    const std::int32_t requests = tracked ? ctx.active->activeRequests(w) : 0;
    double prefill_blocks, logit;
    if (!newer) {
      const std::int64_t new_tokens = std::max<std::int64_t>(0, isl - overlap * static_cast<std::int64_t>(block_size));
      prefill_blocks = static_cast<double>(new_tokens + active_tokens) / block_size;
      logit = weight * prefill_blocks + decode_blocks;
    } else {
      const double raw = static_cast<double>(isl + active_tokens) / block_size;
      prefill_blocks = std::max(0.0, raw - credit * static_cast<double>(overlap));
      logit = scale * prefill_blocks + decode_blocks + per_request * requests;
    }
    logits[w] = logit;
    CandidateScore c;
    c.worker = w;
    c.eligible = ctx.workers[w].alive;
    c.score = logit;
    c.add("prefill_blocks", prefill_blocks);
    c.add("decode_blocks", decode_blocks);
    c.add("overlap_blocks", static_cast<double>(overlap));
    c.add("tree_blocks",
          w < static_cast<WorkerId>(ctx.tree_blocks.size()) ? static_cast<double>(ctx.tree_blocks[w]) : 0);
    out.candidates.push_back(c);
    if (!c.eligible) continue;
    lo = std::min(lo, logit);
    hi = std::max(hi, logit);
  }

  std::vector<double> probability(ctx.workers.size(), 0.0);
  const WorkerId picked = selectWorker(ctx, logits, lo, hi, temperature, probability);
  for (CandidateScore& c : out.candidates) c.add("probability", probability[c.worker]);

  sortCandidates(out.candidates, [&](const CandidateScore& a, const CandidateScore& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (a.eligible) {
      if ((a.worker == picked) != (b.worker == picked)) return a.worker == picked;
      if (a.score != b.score) return a.score < b.score;
    }
    return a.worker < b.worker;
  });
}

}  // namespace kvscope
