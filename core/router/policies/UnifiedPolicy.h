#pragma once
// The lab's Unified cost model for non-disaggregated instances (ARCHITECTURE.md D3): estimated
// seconds until the request's first token on each instance, with two overload gates deciding whether
// the session's affinity instance may be kept although another is cheaper.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class UnifiedPolicy final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "unified"; }
  bool lowerIsBetter() const override { return true; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
