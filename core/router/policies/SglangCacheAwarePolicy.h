#pragma once
// After SGLang's router `cache_aware` policy: balance by load when the cluster is imbalanced,
// otherwise follow the longest cached prefix if it covers enough of the prompt.
#include "router/RoutingPolicy.h"

namespace kvscope {

class SglangCacheAwarePolicy final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "sglang-cache-aware"; }
  bool lowerIsBetter() const override { return false; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
