#pragma once
// What the lab's proxy (gahow/agentic-kvc scripts/cache_aware_proxy.py) knows of an instance when
// it picks one. Its counters are its own, kept as requests pass through it, not the engine's:
//   num_requests            requests it sent there and has not seen finish ("waiting + running")
//   ongoing_tokens          their input tokens ("sum of input_length across in-flight reqs")
//   pending_prefill_tokens  their uncached tokens (as it estimated them) until their first token
//   ongoing_decode_tokens   the input tokens of those past their first token
// (analysis/characterization/b3_policies_pseudocode.md @ 08530b39: "counters are mutated when a
// request starts/finishes, not inside the picker"). The router keeps the same counters for the
// requests it routed (ActiveSequences), so a simulation and a live router behind a real proxy
// count alike. The cache hit is the one the knob cache_view selects: the proxy's LRU of 512-token
// blocks (ProxyBlockCache.h, the lab's estimate_cache_hit) or the engine's exact state.
// Which instant moves pending prefill into decode (first token) and which amount counts as decode
// load (the input tokens) are read from the lab's prose and commit messages: the picker bodies
// are in the stored pages, the handler that moves the counters is not.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

struct LabInstance {
  std::int64_t num_requests = 0;
  std::int64_t ongoing_tokens = 0;
  std::int64_t pending_prefill_tokens = 0;
  std::int64_t ongoing_decode_tokens = 0;
  std::int64_t cache_hit_tokens = 0;
  std::int64_t new_uncached_tokens = 0;  // max(0, input_length - cache_hit_tokens)
};

LabInstance labInstance(const RouteContext& ctx, WorkerId w);

// The components every lab policy reports, in this order: a candidate for `w` carrying them.
inline constexpr ScoreComponentSpec kLabComponents[] = {
    {"pending_prefill", "tokens", "Uncached tokens of the requests the router sent there that have no first token yet"},
    {"new_uncached", "tokens", "This prompt's tokens not cached there (input - cache_hit)"},
    {"num_requests", "requests", "Requests the router sent there and has not seen finish"},
    {"cache_hit", "tokens", "Prompt tokens cached there, as cache_view sees them"},
};
CandidateScore labCandidate(const RouteContext& ctx, WorkerId w, const LabInstance& lab);

// The lab's LMetric: (pending_prefill_tokens + new_uncached) x num_requests.
double lmetricScore(const LabInstance& lab);
// Appends every worker's candidate with its lab components and LMetric score (in worker order,
// unsorted) and returns the first eligible minimum (the proxy's strict `<`), kNoWorker if none.
WorkerId appendLmetricCandidates(const RouteContext& ctx, RouteDecision& out);

// The proxy's round-robin among instances still tied after every other key: the tied list in
// index order, tied[counter % size], and the counter moves on (its _leastwork_rr_counter).
WorkerId roundRobinAmong(std::span<const WorkerId> tied, std::uint64_t& counter);

}  // namespace kvscope
