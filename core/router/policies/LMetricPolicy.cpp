#include "core/router/policies/LMetricPolicy.h"

#include <algorithm>

namespace kvscope {

void LMetricPolicy::rank(const RouteContext& ctx, RouteDecision& out) const {

  const std::int64_t input = ctx.request.input_tokens;
  out.candidates.reserve(ctx.workers.size());
  for (std::size_t w = 0; w < ctx.workers.size(); ++w) {
    const WorkerLoad& load = ctx.workers[w];
    const std::int64_t cached = cachedTokens(ctx, w);
    const std::int64_t prefill = input - cached;
    const std::int64_t batch = std::int64_t{load.running} + load.queued;
    CandidateScore c;
    c.worker = static_cast<WorkerId>(w);
    c.eligible = load.alive;
    // An idle worker scores 0 whatever its cache holds; that is the paper's rule, kept as is (with
    // every worker idle the tie goes to worker 0, the lab's documented degenerate case).
    c.score = static_cast<double>(prefill) * static_cast<double>(batch);
    c.add("prefill_tokens", static_cast<double>(prefill));
    c.add("batch_size", static_cast<double>(batch));
    out.candidates.push_back(c);
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(), [](const CandidateScore& a, const CandidateScore& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (a.eligible && a.score != b.score) return a.score < b.score;
    return a.worker < b.worker;
  });
}

}  // namespace kvscope
