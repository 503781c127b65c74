#pragma once
// The lab's Unified cost model for non-disaggregated instances (ARCHITECTURE.md D3): estimated
// seconds until the request's first token on each instance, with two overload gates deciding whether
// the session's affinity instance may be kept although another is cheaper. Its inputs are the
// proxy's counters and cache view, as for every lab proxy policy (LabProxyView.h): num_requests,
// pending prefill, ongoing tokens; the gated form the lab moved to later is unified-gated.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class UnifiedPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
