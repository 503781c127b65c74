#include "core/router/policies/LabProxyView.h"

#include <algorithm>

namespace kvscope {

LabInstance labInstance(const RouteContext& ctx, WorkerId w) {
  LabInstance i;
  if (ctx.active) {
    i.num_requests = ctx.active->activeRequests(w);
    i.ongoing_tokens = ctx.active->inputTokens(w);
    i.pending_prefill_tokens = ctx.active->activeTokens(w);
    i.ongoing_decode_tokens = ctx.active->decodeTokens(w);
  }
  const std::int64_t input = std::max<std::int64_t>(0, ctx.request.input_tokens);
  if (!ctx.proxy_cached.empty()) {
    i.cache_hit_tokens =
        w < static_cast<WorkerId>(ctx.proxy_cached.size()) ? ctx.proxy_cached[static_cast<std::size_t>(w)] : 0;
  } else {
    const std::int64_t held = w >= 0 && w < kMaxWorkers ? ctx.match.prefix_blocks[static_cast<std::size_t>(w)] : 0;
    i.cache_hit_tokens = held * ctx.block_size;
  }
  i.cache_hit_tokens = std::min(i.cache_hit_tokens, input);
  i.new_uncached_tokens = input - i.cache_hit_tokens;
  return i;
}

CandidateScore labCandidate(const RouteContext& ctx, WorkerId w, const LabInstance& lab) {
  CandidateScore c;
  c.worker = w;
  c.eligible = ctx.workers[static_cast<std::size_t>(w)].alive;
  c.add("pending_prefill", static_cast<double>(lab.pending_prefill_tokens));
  c.add("new_uncached", static_cast<double>(lab.new_uncached_tokens));
  c.add("num_requests", static_cast<double>(lab.num_requests));
  c.add("cache_hit", static_cast<double>(lab.cache_hit_tokens));
  return c;
}

double lmetricScore(const LabInstance& lab) {
  return static_cast<double>(lab.pending_prefill_tokens + lab.new_uncached_tokens) *
         static_cast<double>(lab.num_requests);
}

WorkerId appendLmetricCandidates(const RouteContext& ctx, RouteDecision& out) {
  WorkerId best = kNoWorker;
  const std::size_t first = out.candidates.size();
  for (WorkerId w = 0; w < static_cast<WorkerId>(ctx.workers.size()); ++w) {
    const LabInstance lab = labInstance(ctx, w);
    CandidateScore& c = out.candidates.emplace_back(labCandidate(ctx, w, lab));
    c.score = lmetricScore(lab);
    if (c.eligible && (best == kNoWorker || c.score < out.candidates[first + static_cast<std::size_t>(best)].score))
      best = w;
  }
  return best;
}

WorkerId roundRobinAmong(std::span<const WorkerId> tied, std::uint64_t& counter) {
  if (tied.empty()) return kNoWorker;
  const WorkerId w = tied[static_cast<std::size_t>(counter % tied.size())];
  ++counter;
  return w;
}

}  // namespace kvscope
