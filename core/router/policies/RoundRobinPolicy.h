#pragma once
// Round-robin over the alive workers: a control with no cache, load or affinity in it. (KVScope
// called this `linear` until it learned that the lab's linear is a cache-aware cost: LinearPolicy.h.)
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class RoundRobinPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
