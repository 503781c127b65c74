#pragma once
// The lab's KV-aware router (KVC v2) and its proposed fix, exclusive overlap (ARCHITECTURE.md D3):
// score = overlap + sticky bonus + load-floor bonus, the maximum wins.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class KvAwarePolicy final : public RoutingPolicy {
 public:
  // `exclusive` counts only the blocks this session alone stored, so shared boilerplate stops
  // pulling every fresh session to the worker that happens to hold it.
  explicit KvAwarePolicy(bool exclusive = false) : exclusive_(exclusive) {}

  static const PolicySpec kSpec;
  static const PolicySpec kExclusiveSpec;
  const PolicySpec& spec() const override { return exclusive_ ? kExclusiveSpec : kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;

 private:
  bool exclusive_;
};

}  // namespace kvscope
