#include "core/router/policies/KvAwarePolicy.h"

#include <algorithm>

namespace kvscope {

namespace {
constexpr KnobId kKnobs[] = {KnobId::LoadFloorK, KnobId::StickyBonus, KnobId::Epsilon, KnobId::ColdDBonus};
constexpr ScoreComponentSpec kComponents[] = {
    {"overlap", "%",
     "Share (0-100) of the request's prefix blocks resident on the worker; exclusive-overlap counts "
     "only blocks the session owns"},
    {"sticky", "score", "sticky_bonus, on the worker the session is bound to"},
    {"floor_bonus", "score",
     "Load-floor bonus K * max(0, mean - assigned) / max(1, mean); fresh sessions only (the "
     "E3 fix for a cold D)"},
    {"assigned", "sessions", "Sessions bound to the worker at decision time (not added to the score)"},
    {"cold_bonus", "score", "cold_d_bonus, on a worker with no assigned sessions; fresh sessions only"},
};
}  // namespace

const PolicySpec KvAwarePolicy::kSpec{
    .name = "kv-aware",
    .description =
        "The lab's KV-aware router (KVC v2): prefix overlap + sticky bonus + load-floor bonus, the maximum wins",
    .origin = "the lab's KvAwarePolicy (agentic-pd-hybrid, seeds 000/001)",
    .lower_is_better = false,
    .retries_within_epsilon = true,
    .knobs = kKnobs,
    .components = kComponents,
    .tie_break =
        "kv-aware gives a tie to the first worker in index order, as the lab's router does (half of the "
        "cold-D pattern)",
    .override_rule = "",  // "": the chosen worker has the best score
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<KvAwarePolicy>(false); },
};

const PolicySpec KvAwarePolicy::kExclusiveSpec{
    .name = "exclusive-overlap",
    .description = "kv-aware counting only the blocks the session itself stored (the proposed fix for cold D)",
    .origin = "the lab's proposed fix (seed 001)",
    .lower_is_better = false,
    .retries_within_epsilon = true,
    .knobs = kKnobs,
    .components = kComponents,
    .tie_break = "exclusive-overlap gives a tie to the worker with fewer assigned sessions",
    .override_rule = "",  // "": the chosen worker has the best score
    .make = []() -> std::unique_ptr<RoutingPolicy> { return std::make_unique<KvAwarePolicy>(true); },
};

// Units. `overlap` is the percentage (0..100) of the request's blocks resident on the worker, not a
// raw block count, so the bonuses below have a meaning independent of prompt length. A fresh
// session's match on a warm worker is only its boilerplate share of the prompt (typically 20-90), so
// K = 200 on a fully starved worker (deficit / mean = 1) outweighs any boilerplate pull, while a
// sticky session (StickyBonus, default 100, plus its own ~100 overlap) stays put.
void KvAwarePolicy::rank(const RouteContext& ctx, RouteDecision& out) const {
  const auto n = static_cast<WorkerId>(ctx.workers.size());
  const double sticky_bonus = ctx.knobs.get(KnobId::StickyBonus);
  const double k = ctx.knobs.get(KnobId::LoadFloorK);
  const double cold_bonus = ctx.knobs.get(KnobId::ColdDBonus);
  const double request_blocks = static_cast<double>(std::max<std::size_t>(1, ctx.request.hashes.size()));

  double assigned_sum = 0;
  int alive = 0;
  for (const WorkerLoad& load : ctx.workers) {
    if (!load.alive) continue;
    assigned_sum += load.assigned_sessions;
    ++alive;
  }
  const double mean = alive > 0 ? assigned_sum / alive : 0.0;
  // A binding to a dead worker pins nothing: such a session is placed like a fresh one.
  const WorkerId bound = ctx.bound_worker;
  const bool sticky = bound >= 0 && bound < n && ctx.workers[bound].alive;

  out.candidates.reserve(ctx.workers.size());
  for (WorkerId w = 0; w < n; ++w) {
    const WorkerLoad& load = ctx.workers[w];
    std::int32_t held = 0;
    if (w < kMaxWorkers) held = exclusive_ ? ctx.match.exclusive_blocks[w] : ctx.match.prefix_blocks[w];
    const double overlap = 100.0 * held / request_blocks;
    const double sticky_term = sticky && w == bound ? sticky_bonus : 0.0;
    // The load floor (the E3 fix) only steers fresh sessions toward under-assigned workers; moving
    // a sticky session would throw its cache away.
    const double floor_bonus = sticky ? 0.0 : k * std::max(0.0, mean - load.assigned_sessions) / std::max(1.0, mean);
    // The lab's --kvcache-cold-d-bonus (agentic-pd-hybrid, commit 786cbb8): a D that has no
    // assignment yet gets a flat bonus for fresh requests.
    const double cold_term = !sticky && load.assigned_sessions == 0 ? cold_bonus : 0.0;
    CandidateScore c;
    c.worker = w;
    c.eligible = load.alive;
    c.score = overlap + sticky_term + floor_bonus + cold_term;
    c.add("overlap", overlap);
    c.add("sticky", sticky_term);
    c.add("floor_bonus", floor_bonus);
    c.add("assigned", load.assigned_sessions);
    c.add("cold_bonus", cold_term);
    out.candidates.push_back(c);
  }

  sortCandidates(out.candidates, [&](const CandidateScore& a, const CandidateScore& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (a.eligible) {
      if (a.score != b.score) return a.score > b.score;
      // Ties: the lab's KvAwarePolicy takes the first best worker in index order (Python's max),
      // which is half of the cold-D mechanism. Exclusive overlap, where a fresh session matches
      // nothing anywhere, breaks ties toward fewer assigned sessions so its scores can spread.
      const auto assigned_a = ctx.workers[a.worker].assigned_sessions;
      const auto assigned_b = ctx.workers[b.worker].assigned_sessions;
      if (exclusive_ && assigned_a != assigned_b) return assigned_a < assigned_b;
    }
    return a.worker < b.worker;
  });
}

}  // namespace kvscope
