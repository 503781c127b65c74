#pragma once
// The lab's `linear` (its proxy's original default; gahow/agentic-kvc scripts/cache_aware_proxy.py,
// docstring @ ea5149726cdeacadb20a761eff9f4fb26bb13f28): a linear cache-aware cost, not a rotation,
//   score = ongoing_tokens - linear_cache_alpha x cache_hit_tokens   (CACHE_HIT_ALPHA = 1.0),
// the minimum wins, with session affinity: "Turn 2+: use session affinity UNLESS pinned instance is
// overloaded (ongoing_tokens > 2x average), in which case pick least-loaded. Turn 1: pick instance
// with best score (load + cache combined)" (pick_instance @ 012d73f5; overload_factor = 2.0).
// Least-loaded is the fewest ongoing tokens. Counters and cache hit: LabProxyView.h. Equal scores go
// to the lowest index (the proxy's strict `<` over its instances in order).
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class LinearPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
