#pragma once
// After NVIDIA Dynamo's KV router (DefaultWorkerSelector): logit = overlap_score_weight x
// prefill_blocks + decode_blocks, the minimum wins at temperature 0, a softmax draw above it.
#include "router/RoutingPolicy.h"

namespace kvscope {

class DynamoKvPolicy final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "dynamo-kv"; }
  bool lowerIsBetter() const override { return true; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
