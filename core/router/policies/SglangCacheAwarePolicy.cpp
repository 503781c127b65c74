#include "core/router/policies/SglangCacheAwarePolicy.h"

#include <algorithm>
#include <limits>

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::CacheThreshold, KnobId::BalanceAbsThreshold, KnobId::BalanceRelThreshold,
                             KnobId::EvictionIntervalS, KnobId::MaxTreeSize};
constexpr ScoreComponentSpec kComponents[] = {
    {"match_rate", "fraction", "Cached fraction of the prompt in the router's tree, for this worker"},
    {"tree_match_rate", "fraction", "The tree's longest match over the prompt (what cache_threshold is compared with)"},
    {"load", "requests", "Running + queued requests"},
    {"tree_size", "blocks", "The worker's part of the router's approximate tree"},
    {"imbalanced", "flag", "1 when both balance thresholds trip, so load decides"},
    {"branch", "code", "0 balance load, 1 longest cache match, 2 smallest tree, 3 first healthy (fallback)"},
};
}  // namespace

const PolicySpec SglangCacheAwarePolicy::kSpec{
    .name = "sglang-cache-aware",
    .description = "SGLang router's cache_aware: its own approximate radix tree, with a load-balance override",
    .origin = "sgl-router/src/policies/cache_aware.rs @ b6f20641ad6bafc1278db74d1e13b0e9da47bd64",
    .lower_is_better = false,
    .knobs = kKnobs,
    .components = kComponents,
    .tie_break = "sglang-cache-aware gives a tie to the less loaded worker",
    .override_rule = "sglang-cache-aware follows its branch (balance, tree match, smallest tree), not one total score",
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<SglangCacheAwarePolicy>(); },
};

namespace {
enum Branch { kBalance = 0, kCache = 1, kSmallestTree = 2, kFallback = 3 };
}  // namespace

void SglangCacheAwarePolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const auto n = static_cast<WorkerId>(ctx.workers.size());
  if (!tree_) tree_ = std::make_unique<ApproxRadixTree>(static_cast<int>(n));
  const double cache_threshold = ctx.knobs.get(KnobId::CacheThreshold);
  const double abs_threshold = ctx.knobs.get(KnobId::BalanceAbsThreshold);
  const double rel_threshold = ctx.knobs.get(KnobId::BalanceRelThreshold);
  auto loadOf = [&](WorkerId w) { return std::int64_t{ctx.workers[w].running} + ctx.workers[w].queued; };

  // cache_aware.rs: max and min over every worker's load (healthy or not).
  std::int64_t max_load = 0, min_load = 0;
  for (WorkerId w = 0; w < n; ++w) {
    max_load = w == 0 ? loadOf(w) : std::max(max_load, loadOf(w));
    min_load = w == 0 ? loadOf(w) : std::min(min_load, loadOf(w));
  }
  const bool imbalanced = static_cast<double>(std::max<std::int64_t>(0, max_load - min_load)) > abs_threshold &&
                          static_cast<double>(max_load) > static_cast<double>(min_load) * rel_threshold;

  const std::size_t len = ctx.request.hashes.size();
  const ApproxRadixTree::Match m = tree_->prefixMatch(ctx.request.hashes, static_cast<std::uint64_t>(ctx.request.now));
  const double rate = len == 0 ? 0.0 : static_cast<double>(m.matched) / static_cast<double>(len);
  WorkerId first_healthy = kNoWorker, least_loaded = kNoWorker;
  for (WorkerId w = 0; w < n; ++w) {
    if (!ctx.workers[w].alive) continue;
    if (first_healthy == kNoWorker) first_healthy = w;
    if (least_loaded == kNoWorker || loadOf(w) < loadOf(least_loaded)) least_loaded = w;
  }
  Branch branch;
  WorkerId picked;
  if (imbalanced) {
    branch = kBalance;
    picked = least_loaded;
  } else {
    branch = rate > cache_threshold ? kCache : kSmallestTree;
    picked = branch == kCache ? m.tenant : tree_->smallestTenant();
    if (picked == kNoWorker || picked >= n || !ctx.workers[picked].alive) {
      branch = kFallback;
      picked = first_healthy;
    }
  }

  out.candidates.reserve(ctx.workers.size());
  for (WorkerId w = 0; w < n; ++w) {
    const double own =
        len == 0 ? 0.0 : static_cast<double>(m.per_tenant[static_cast<std::size_t>(w)]) / static_cast<double>(len);
    CandidateScore c;
    c.worker = w;
    c.eligible = ctx.workers[w].alive;
    c.score = branch == kBalance ? -static_cast<double>(loadOf(w)) : own;  // higher is better
    c.add("match_rate", own);
    c.add("tree_match_rate", rate);
    c.add("load", static_cast<double>(loadOf(w)));
    c.add("tree_size", static_cast<double>(tree_->size(w)));
    c.add("imbalanced", imbalanced ? 1 : 0);
    c.add("branch", branch);
    out.candidates.push_back(c);
  }
  sortCandidates(out.candidates, [&](const CandidateScore& a, const CandidateScore& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (a.eligible) {
      if ((a.worker == picked) != (b.worker == picked)) return a.worker == picked;
      if (a.score != b.score) return a.score > b.score;
    }
    return a.worker < b.worker;
  });
}

void SglangCacheAwarePolicy::routed(const RouteContext& ctx, WorkerId chosen) {
  if (!tree_) return;
  const auto now = static_cast<std::uint64_t>(ctx.request.now);
  tree_->insert(ctx.request.hashes, chosen, now);
  // The background eviction thread of cache_aware.rs, on the router's clock.
  const SimTime interval = secondsToTime(ctx.knobs.get(KnobId::EvictionIntervalS));
  if (interval > 0 && ctx.request.now - last_eviction_ >= interval) {
    tree_->evictTenantBySize(static_cast<std::int64_t>(ctx.knobs.get(KnobId::MaxTreeSize)));
    last_eviction_ = ctx.request.now;
  }
}

}  // namespace kvscope
