#pragma once
// The lab's later `unified` (pick_instance_unified_hybrid in gahow/agentic-kvc
// scripts/cache_aware_proxy.py, commit ac6534c3ff57e6d10281a7c28841957371570a0c; the algorithm in
// docs/migration-policy-design.md @ d9cf3126; lmetric_decode_weight from 8708b755):
//   if the session has an affinity instance a:
//     cache_ratio = cache_hit(a) / input_length
//     stay on a if cache_ratio > cache_ratio_gate (0.5)
//              and num_requests(a) <= avg_num_requests x overload_factor (2.0)
//   otherwise the LMetric fallback over every instance:
//     score = (pending_prefill + new_uncached) x num_requests  [+ lmetric_decode_weight x
//             ongoing_decode_tokens, with num_requests floored at 1, when the weight is set (B')]
//   ties: primary score, then new_uncached, then num_requests, then round-robin.
// The decision's fields are the lab's decision dict: decision (1 affinity, 0 fallback), affinity
// (its index, -1 none), cache_ratio, avg_num_requests, tie_break (0 none, 1 new_uncached,
// 2 num_requests, 3 round-robin); the fallback score is each candidate's score. `unified_ab` is
// overload_factor 1.3 with lmetric_decode_weight 0.01; `unified_def` the defaults. How the decode
// weight enters the score is read from the commit message ("decode-load penalty in the LMetric
// fallback score", "max(num_req,1)"), not from the function body, which the stored pages cut.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class UnifiedGatedPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;

 private:
  mutable std::uint64_t round_robin_ = 0;
};

}  // namespace kvscope
