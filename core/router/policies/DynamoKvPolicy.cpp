#include "router/policies/DynamoKvPolicy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kvscope {

void DynamoKvPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {

  const double weight = ctx.knobs.get(KnobId::OverlapScoreWeight);
  const double temperature = ctx.knobs.get(KnobId::RouterTemperature);
  const auto request_blocks = static_cast<std::int64_t>(ctx.request.hashes.size());
  const std::int64_t block_size = std::max(1, ctx.block_size);
  const auto n = static_cast<WorkerId>(ctx.workers.size());

  std::vector<double> logits(ctx.workers.size());
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  WorkerId argmin = kNoWorker;
  for (WorkerId w = 0; w < n; ++w) {
    const std::int64_t held = w < kMaxWorkers ? ctx.match.prefix_blocks[w] : 0;
    const std::int64_t prefill_blocks = std::max<std::int64_t>(0, request_blocks - held);
    // Dynamo counts a worker's active blocks; whole blocks only, as its block manager does.
    const std::int64_t decode_blocks = ctx.workers[w].kv_used / block_size;
    logits[w] = weight * static_cast<double>(prefill_blocks) + static_cast<double>(decode_blocks);
    CandidateScore c;
    c.worker = w;
    c.eligible = ctx.workers[w].alive;
    c.score = logits[w];
    c.add("prefill_blocks", static_cast<double>(prefill_blocks));
    c.add("decode_blocks", static_cast<double>(decode_blocks));
    c.add("logit", logits[w]);
    out.candidates.push_back(c);
    if (!c.eligible) continue;
    lo = std::min(lo, logits[w]);
    hi = std::max(hi, logits[w]);
    if (argmin == kNoWorker || logits[w] < logits[argmin]) argmin = w;
  }

  // Dynamo's softmax_sample: logits min-max normalised to [0, 1] over the candidates (all equal ->
  // uniform), probabilities softmax(-normalised / T), the draw picks by inverse CDF with `<=`.
  std::vector<double> probability(ctx.workers.size(), 0.0);
  WorkerId picked = argmin;
  if (argmin != kNoWorker && temperature > 0) {
    double sum = 0;
    for (WorkerId w = 0; w < n; ++w) {
      if (!ctx.workers[w].alive) continue;
      probability[w] = hi == lo ? 1.0 : std::exp(-(logits[w] - lo) / ((hi - lo) * temperature));
      sum += probability[w];
    }
    double cdf = 0;
    WorkerId last_alive = kNoWorker;
    picked = kNoWorker;
    for (WorkerId w = 0; w < n; ++w) {
      if (!ctx.workers[w].alive) continue;
      probability[w] /= sum;
      cdf += probability[w];
      last_alive = w;
      if (picked == kNoWorker && ctx.uniform <= cdf) picked = w;
    }
    // Rounding can leave the CDF just under the draw; the last candidate takes the remainder.
    if (picked == kNoWorker) picked = last_alive;
  } else if (argmin != kNoWorker) {
    probability[argmin] = 1.0;
  }
  for (CandidateScore& c : out.candidates) c.add("probability", probability[c.worker]);

  std::stable_sort(out.candidates.begin(), out.candidates.end(), [&](const CandidateScore& a, const CandidateScore& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (a.eligible) {
      if ((a.worker == picked) != (b.worker == picked)) return a.worker == picked;
      if (a.score != b.score) return a.score < b.score;
    }
    return a.worker < b.worker;
  });
}

}  // namespace kvscope
