#pragma once
// Round-robin over the alive workers: the baseline every other policy is measured against.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class LinearPolicy final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "linear"; }
  bool lowerIsBetter() const override { return true; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
