#pragma once
// LMetric ("Simple is Better", arXiv 2603.15202): score = P x BS, the minimum wins. P is the new
// prefill tokens the request would need on the worker, BS the worker's batch size. No affinity and
// no hyperparameters by design.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class LMetricPolicy final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "lmetric"; }
  bool lowerIsBetter() const override { return true; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
