#pragma once
// LMetric as the lab's proxy computes it (gahow/agentic-kvc
// analysis/characterization/b3_policies_pseudocode.md @ 08530b3915, pick_lmetric):
//   p_tokens = pending_prefill_tokens + max(0, input_length - cache_hit)
//   score    = p_tokens x num_requests,   the minimum wins (strict <: the lowest index of equals)
// No affinity, no knobs. With every instance idle every score is 0 and instance 0 wins, the lab's
// documented degenerate case. The paper ("Simple is Better", arXiv 2603.15202) puts only the new
// prefill tokens in P; the lab's proxy adds the instance's pending prefill, and the twin runs the
// lab's form. Counters and cache hit: LabProxyView.h.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class LMetricPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
