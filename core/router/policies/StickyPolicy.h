#pragma once
// The lab's `sticky` control ("hard session affinity", gahow/agentic-kvc v2/exp_d_policy_dispatch
// README @ 0b180c19): a session stays on the instance it was first placed on, whatever its load or
// cache; a session without one (its first turn, or its instance is down) is placed by LMetric, the
// lab's main baseline. The body of the lab's picker is not in the stored pages; this is the
// control its name and the lab's decision matrix describe.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class StickyPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
