#pragma once
// NVIDIA Dynamo's KV router, as DefaultWorkerSelector scores workers in
// lib/llm/src/kv_router/scheduler.rs @ db19bd2a659d4cb04998fb4101cd0dbfbbeba9d4:
//   prefill_blocks = (new tokens isl - overlap x block_size + the router's tracked prompt tokens
//                     not yet prefilled on the worker) / block_size
//   decode_blocks  = distinct blocks of the requests the router tracks there + this prompt's
//                    blocks they do not hold (sequence.rs potential_blocks_and_tokens)
//   logit = overlap_score_weight x prefill_blocks + decode_blocks, lowest wins.
// In disaggregated serving the decode worker is chosen with overlap_score_weight = 0 (the decode
// request's router_config_override in prefill_router.rs): by load alone. Temperature 0 keeps every
// worker at the minimum; ties go to the smaller tree (blocks the indexer holds), then to a uniform
// draw among the tied (softmax_sample + select_worker). Temperature > 0 samples softmax over the
// min-max normalised, negated logits. dynamo_cost_form = 1 scores with the newer form of
// lib/kv-router/src/scheduling/selector/default.rs @ a4bdb9bfa1eed0afd4d67331f0938f9d5e3b58ed
// (PR #9267): prefill_load_scale x max(0, raw prefill blocks - overlap_score_credit x overlap) +
// decode_blocks + decode_active_request_weight x tracked requests.
#include "core/router/RoutingPolicy.h"

namespace kvscope {

class DynamoKvPolicy final : public RoutingPolicy {
 public:
  static const PolicySpec kSpec;
  const PolicySpec& spec() const override { return kSpec; }
  void rank(const RouteContext& ctx, RouteDecision& out) const override;
};

}  // namespace kvscope
