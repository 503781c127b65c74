// The registry of routing policies by their CLI names (ARCHITECTURE.md D3).
#include <algorithm>
#include <array>

#include "core/router/RoutingPolicy.h"
#include "core/router/policies/DynamoKvPolicy.h"
#include "core/router/policies/KvAwarePolicy.h"
#include "core/router/policies/LMetricPolicy.h"
#include "core/router/policies/LinearPolicy.h"
#include "core/router/policies/SglangCacheAwarePolicy.h"
#include "core/router/policies/UnifiedPolicy.h"

namespace kvscope {

void RoutingPolicy::decide(const RouteContext& ctx, RouteDecision& out) const {
  out.request = ctx.request.id;
  out.session = ctx.request.session;
  out.turn = ctx.request.turn;
  out.policy = name();
  out.lower_is_better = lowerIsBetter();
  out.candidates.clear();
  out.candidates.reserve(ctx.workers.size());
  rank(ctx, out);
  out.chosen = !out.candidates.empty() && out.candidates.front().eligible ? out.candidates.front().worker : kNoWorker;
}

std::int64_t RoutingPolicy::cachedTokens(const RouteContext& ctx, std::size_t w) {
  const std::int64_t held = w < static_cast<std::size_t>(kMaxWorkers) ? ctx.match.prefix_blocks[w] : 0;
  return std::min<std::int64_t>(ctx.request.input_tokens, held * ctx.block_size);
}

namespace {
constexpr std::array<std::string_view, 7> kPolicyNames{
    "linear", "lmetric", "unified", "kv-aware", "exclusive-overlap", "sglang-cache-aware", "dynamo-kv"};
}  // namespace

std::span<const std::string_view> policyNames() { return kPolicyNames; }

std::unique_ptr<RoutingPolicy> makePolicy(std::string_view name) {
  if (name == "linear") return std::make_unique<LinearPolicy>();
  if (name == "lmetric") return std::make_unique<LMetricPolicy>();
  if (name == "unified") return std::make_unique<UnifiedPolicy>();
  if (name == "kv-aware") return std::make_unique<KvAwarePolicy>(/*exclusive=*/false);
  if (name == "exclusive-overlap") return std::make_unique<KvAwarePolicy>(/*exclusive=*/true);
  if (name == "sglang-cache-aware") return std::make_unique<SglangCacheAwarePolicy>();
  if (name == "dynamo-kv") return std::make_unique<DynamoKvPolicy>();
  return nullptr;
}

}  // namespace kvscope
