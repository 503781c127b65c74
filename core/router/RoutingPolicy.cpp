#include "core/router/RoutingPolicy.h"

#include <algorithm>

namespace kvscope {

void RoutingPolicy::decide(const RouteContext& ctx, RouteDecision& out) const {
  out.request = ctx.request.id;
  out.session = ctx.request.session;
  out.turn = ctx.request.turn;
  out.policy = name();
  out.lower_is_better = lowerIsBetter();
  out.candidates.clear();
  out.candidates.reserve(ctx.workers.size());
  out.num_fields = 0;
  rank(ctx, out);
  out.chosen = !out.candidates.empty() && out.candidates.front().eligible ? out.candidates.front().worker : kNoWorker;
}

std::int64_t RoutingPolicy::cachedTokens(const RouteContext& ctx, std::size_t w) {
  const std::int64_t held = w < static_cast<std::size_t>(kMaxWorkers) ? ctx.match.prefix_blocks[w] : 0;
  return std::min<std::int64_t>(ctx.request.input_tokens, held * ctx.block_size);
}

void RoutingPolicy::orderCandidates(RouteDecision& out, WorkerId chosen, bool lower_is_better) {
  sortCandidates(out.candidates, [&](const CandidateScore& a, const CandidateScore& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (a.eligible) {
      if ((a.worker == chosen) != (b.worker == chosen)) return a.worker == chosen;
      if (a.score != b.score) return lower_is_better ? a.score < b.score : a.score > b.score;
    }
    return a.worker < b.worker;
  });
}

}  // namespace kvscope
