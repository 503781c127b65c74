#include "router/policies/SglangCacheAwarePolicy.h"

#include <algorithm>
#include <limits>

namespace kvscope {

namespace {
enum Branch { kBalance = 0, kCache = 1, kLeastLoad = 2 };
}  // namespace

void SglangCacheAwarePolicy::rank(const RouteContext& ctx, RouteDecision& out) const {

  const double cache_threshold = ctx.knobs.get(KnobId::CacheThreshold);
  const double abs_threshold = ctx.knobs.get(KnobId::BalanceAbsThreshold);
  const double rel_threshold = ctx.knobs.get(KnobId::BalanceRelThreshold);
  const std::int64_t input = ctx.request.input_tokens;
  const auto n = static_cast<WorkerId>(ctx.workers.size());

  auto loadOf = [&](WorkerId w) { return std::int64_t{ctx.workers[w].running} + ctx.workers[w].queued; };
  auto matchRate = [&](WorkerId w) {
    if (input <= 0) return 0.0;
    return static_cast<double>(cachedTokens(ctx, w)) / static_cast<double>(input);
  };

  std::int64_t max_load = 0;
  std::int64_t min_load = std::numeric_limits<std::int64_t>::max();
  double best_match = 0;
  for (WorkerId w = 0; w < n; ++w) {
    if (!ctx.workers[w].alive) continue;
    max_load = std::max(max_load, loadOf(w));
    min_load = std::min(min_load, loadOf(w));
    best_match = std::max(best_match, matchRate(w));
  }
  if (min_load == std::numeric_limits<std::int64_t>::max()) min_load = 0;
  // Both thresholds must trip: a small absolute gap on an idle cluster is not worth losing the cache.
  const bool imbalanced = static_cast<double>(max_load - min_load) > abs_threshold &&
                          static_cast<double>(max_load) > static_cast<double>(min_load) * rel_threshold;
  const Branch branch = imbalanced ? kBalance : best_match > cache_threshold ? kCache : kLeastLoad;

  out.candidates.reserve(ctx.workers.size());
  for (WorkerId w = 0; w < n; ++w) {
    const double rate = matchRate(w);
    const auto load = static_cast<double>(loadOf(w));
    CandidateScore c;
    c.worker = w;
    c.eligible = ctx.workers[w].alive;
    c.score = branch == kCache ? rate : -load;  // higher is better in every branch
    c.add("match_rate", rate);
    c.add("load", load);
    c.add("imbalanced", imbalanced ? 1 : 0);
    c.add("branch", branch);
    out.candidates.push_back(c);
  }

  std::stable_sort(out.candidates.begin(), out.candidates.end(), [&](const CandidateScore& a, const CandidateScore& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (a.eligible) {
      if (a.score != b.score) return a.score > b.score;
      if (loadOf(a.worker) != loadOf(b.worker)) return loadOf(a.worker) < loadOf(b.worker);
    }
    return a.worker < b.worker;
  });
}

}  // namespace kvscope
