#pragma once
// SGLang's router `cache_aware` policy, as
// sgl-router/src/policies/cache_aware.rs @ b6f20641ad6bafc1278db74d1e13b0e9da47bd64 runs it with
// its tree (sgl-router/src/policies/tree.rs @ 4d40eec0266be06d0e65b919457691cab9e51547):
//  - loads are the router's per-worker request counts; the cluster is imbalanced when
//    max - min > balance_abs_threshold and max > min x balance_rel_threshold: then the healthy
//    worker with the smallest load (the first of equals) gets the request;
//  - otherwise the router's own approximate tree is matched: match rate = matched / prompt length;
//    above cache_threshold the tenant prefix_match returns gets it, else the smallest tenant;
//    a chosen worker that is not healthy falls back to the first healthy one;
//  - every decision (imbalanced too) inserts the prompt into the tree under the chosen worker; the
//    tree is never told of engine evictions and is trimmed every eviction_interval to max_tree_size.
// The tree lives in the policy object: switching policies starts a fresh one, as a new router would.
#include <memory>

#include "core/router/ApproxRadixTree.h"
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class SglangCacheAwarePolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
  void routed(const RouteContext& ctx, WorkerId chosen) override;

 private:
  mutable std::unique_ptr<ApproxRadixTree> tree_;  // created with the first decision (worker count)
  SimTime last_eviction_ = 0;
};

}  // namespace kvscope
