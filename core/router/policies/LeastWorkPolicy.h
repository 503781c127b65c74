#pragma once
// The lab's Least-Prefill-Work-Left routing, `leastwork` (gahow/agentic-kvc
// scripts/cache_aware_proxy.py, pick_instance_leastwork, patch d9046322c66597d9d926480d3350c192c7392d1c):
//   score = pending_prefill_tokens + max(0, input_length - cache_hit_here),  the minimum wins,
// "pure argmin with (num_requests, round-robin) tie-break", no knobs: "Cache-awareness IS the
// affinity mechanism". `leastwork-kappa` (commit a0db3cbe7713c8a1a93181bee4f14bd664c00415) multiplies
// the score by (1 + kappa x ongoing_decode_tokens), kappa = 2.5e-6 "per resident decode-KV-token"
// (a decode-interference tax the lab found net-negative). Counters and cache hit: LabProxyView.h.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class LeastWorkPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  static const PolicySpec kKappaSpec;
  explicit LeastWorkPolicy(bool kappa) : kappa_(kappa) {}
  const PolicySpec& spec() const override { return kappa_ ? kKappaSpec : kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;

 private:
  bool kappa_;
  mutable std::uint64_t round_robin_ = 0;  // the proxy's _leastwork_rr_counter
};

}  // namespace kvscope
