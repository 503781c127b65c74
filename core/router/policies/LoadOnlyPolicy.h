#pragma once
// The lab's `load_only` control ("no cache / no affinity control", gahow/agentic-kvc
// analysis/characterization/b3_policies_pseudocode.md @ 08530b3915): LMetric with the cache term
// removed, so a comparison with lmetric isolates what cache awareness buys:
//   score = (pending_prefill_tokens + input_length) x num_requests, the minimum wins.
// The stored pages cut the pseudocode before this policy's body; the form is LMetric's with
// cache_hit = 0, which is what "no cache" leaves of it.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class LoadOnlyPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
