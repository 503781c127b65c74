#include "core/knobs/KnobRegistry.h"
#include "core/model/NumberText.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace kvscope {

namespace {

// Defaults: the lab's stable configuration where it is known (ARCHITECTURE.md D5), the anchors'
// documented defaults for their own rules, "off" for the planned fixes.
constexpr KnobSpec kSpecs[] = {
    {KnobId::LoadFloorK, "K", "score", 0, 10000, 0, false, KnobScope::Policy,
     "Load-floor bonus weight: K * max(0, mean - assigned) / max(1, mean) for fresh sessions (0 = off; E3 used 200)"},
    {KnobId::StickyBonus, "sticky_bonus", "score", 0, 10000, 100, false, KnobScope::Policy,
     "Score added to the worker a session is already bound to"},
    {KnobId::Epsilon, "epsilon", "score", 0, 10000, 100, false, KnobScope::Policy,
     "On admission failure, retry the runner-up once if its score is within epsilon of the best"},
    {KnobId::SessionSoftCap, "session_soft_cap", "sessions", 0, 100000, 0, true, KnobScope::Shared,
     "--kvcache-session-soft-cap: resident sessions per D before trimming early (0 = off)"},
    {KnobId::DirectMaxUncachedTokens, "direct_max_uncached_tokens", "tokens", 0, 10000000, 8192, true,
     KnobScope::Shared,
     "--kvcache-direct-max-uncached-tokens: largest uncached token count allowed on the direct path"},
    {KnobId::SeedMinTurnId, "seed_min_turn_id", "turn", 1, 1000, 1, true, KnobScope::Shared,
     "--kvcache-seed-min-turn-id: first turn seeded into D's session cache (2 = skip turn-1 seeds)"},
    {KnobId::MigrationRejectThreshold, "migration_reject_threshold", "rejects", 0, 1000, 0, true, KnobScope::Shared,
     "--kvcache-migration-reject-threshold: rejects before a session migrates to another D (0 = off)"},
    {KnobId::PendingSeedBudget, "pending_seed_budget", "seeds", 0, 10000, 0, true, KnobScope::Shared,
     "Max concurrent seeds in flight to one D; more wait in the router (0 = unlimited)"},
    {KnobId::AdmissionBackoffMs, "admission_backoff_ms", "ms", 0, 600000, 0, false, KnobScope::Shared,
     "Delay before falling back after a no-space admission reject (0 = immediate)"},
    {KnobId::AdmissionJitterMs, "admission_jitter_ms", "ms", 0, 600000, 0, false, KnobScope::Shared,
     "Uniform random extra delay added to the admission backoff"},
    {KnobId::McTransferTimeoutS, "mc_transfer_timeout_s", "s", 1, 86400, 1800, false, KnobScope::Shared,
     "--mc-transfer-timeout: a Mooncake transfer not finished after this long fails"},
    {KnobId::McHandshakeTimeoutS, "mc_handshake_timeout_s", "s", 0.01, 3600, 3, false, KnobScope::Shared,
     "Mooncake handshake window: D must preallocate within it or P marks the D dead"},
    {KnobId::RequestTimeoutS, "request_timeout_s", "s", 1, 86400, 300, false, KnobScope::Shared,
     "--request-timeout-s: the client gives up on a request after this long"},
    {KnobId::Rho, "rho", "fraction", 0.1, 1.0, 0.95, false, KnobScope::Shared,
     "D pool pressure threshold: admission needs used + new <= rho * capacity"},
    {KnobId::DecodeIterationS, "decode_iteration_s", "s", 0.0001, 10, 0.05, false, KnobScope::Policy,
     "Unified cost model: seconds of contention per running request (0.05 on H20)"},
    {KnobId::Throughput, "throughput", "tokens/s", 1, 1e8, 7000, false, KnobScope::Policy,
     "Unified cost model: prefill tokens per second (7000 on H20)"},
    {KnobId::OverloadFactor, "overload_factor", "ratio", 1, 1000, 2.0, false, KnobScope::Policy,
     "Affinity overload gates: unified's ratio to the average ongoing tokens and to the best cost; linear's to the "
     "average ongoing tokens; unified-gated's to the average num_requests (unified_ab used 1.3)"},
    // sglang-cache-aware: the CLI defaults of sgl-router/py_src/sglang_router/router_args.py
    // (RouterArgs @ e46dcd87adca58ec70831ad7cb01a3892b2c9e50).
    {KnobId::CacheThreshold, "cache_threshold", "fraction", 0, 1, 0.3, false, KnobScope::Policy,
     "SGLang cache-aware: route to the tree's matched worker only if the match rate exceeds this, else to the smallest "
     "tree"},
    {KnobId::BalanceAbsThreshold, "balance_abs_threshold", "requests", 0, 100000, 64, false, KnobScope::Policy,
     "SGLang cache-aware: imbalance needs max - min load above this"},
    {KnobId::BalanceRelThreshold, "balance_rel_threshold", "ratio", 1, 1000, 1.5, false, KnobScope::Policy,
     "SGLang cache-aware: imbalance needs max load above min * this"},
    // dynamo-kv: lib/llm/src/kv_router/scheduler.rs @ db19bd2a659d4cb04998fb4101cd0dbfbbeba9d4.
    {KnobId::OverlapScoreWeight, "overlap_score_weight", "ratio", 0, 1000, 1.0, false, KnobScope::Policy,
     "Dynamo KV router: weight of prefill blocks in overlap_score_weight * prefill_blocks + decode_blocks (aggregated "
     "serving; the decode router of disaggregated serving uses 0)"},
    {KnobId::RouterTemperature, "router_temperature", "ratio", 0, 1000, 0.0, false, KnobScope::Policy,
     "Dynamo KV router: softmax temperature over the negated logits (0 = the minimum; ties by smaller tree, then "
     "random)"},
    {KnobId::EvictionIntervalS, "eviction_interval", "s", 0, 86400, 120, true, KnobScope::Policy,
     "SGLang cache-aware: seconds between trims of the router's approximate tree (0 = never)"},
    {KnobId::MaxTreeSize, "max_tree_size", "blocks", 1, 1e12, 67108864, true, KnobScope::Policy,
     "SGLang cache-aware: a worker's part of the approximate tree is trimmed (LRU leaves) to this size (upstream "
     "counts characters of text, KVScope blocks)"},
    {KnobId::DynamoCostForm, "dynamo_cost_form", "form", 0, 1, 0, true, KnobScope::Policy,
     "Dynamo KV router cost: 0 = overlap_score_weight * prefill_blocks + decode_blocks (scheduler.rs), 1 = the newer "
     "prefill_load_scale * max(0, prefill_blocks - overlap_score_credit * overlap) + decode_blocks + "
     "decode_active_request_weight * active_requests (lib/kv-router selector/default.rs, PR #9267)"},
    {KnobId::PrefillLoadScale, "prefill_load_scale", "ratio", 0, 1000, 1.0, false, KnobScope::Policy,
     "Dynamo KV router, newer cost form: weight of the prefill term"},
    {KnobId::OverlapScoreCredit, "overlap_score_credit", "ratio", 0, 1000, 1.0, false, KnobScope::Policy,
     "Dynamo KV router, newer cost form: cached blocks credited against the prefill blocks (0 in disaggregated decode "
     "routing)"},
    {KnobId::DecodeActiveRequestWeight, "decode_active_request_weight", "blocks", 0, 1e6, 0.0, false, KnobScope::Policy,
     "Dynamo KV router, newer cost form: blocks charged per request the router tracks on the worker"},
    // The lab's proxy policies (agentic-kvc scripts/cache_aware_proxy.py; see core/router/policies/LabProxyView.h).
    {KnobId::CacheView, "cache_view", "view", 0, 1, 1, true, KnobScope::Policy,
     "How the lab's proxy policies see each instance's cache: 1 = proxy-lru (the router's own LRU of the prompts it "
     "sent, as the lab's proxy estimates hits), 0 = exact (the engine's KV state, from its KV events)"},
    {KnobId::ProxyBlockTokens, "proxy_block_tokens", "tokens", 1, 1000000, 512, true, KnobScope::Policy,
     "cache_view proxy-lru: tokens per hashed block (the lab's BLOCK_SIZE = 512); rounded to whole router blocks"},
    {KnobId::ProxyLruBlocks, "proxy_lru_blocks", "blocks", 0, 1e9, 0, true, KnobScope::Policy,
     "cache_view proxy-lru: blocks each instance's LRU keeps (the lab's CACHE_CAPACITY_BLOCKS; 0 = the instance's KV "
     "pool in blocks)"},
    {KnobId::LinearCacheAlpha, "linear_cache_alpha", "ratio", 0, 1000, 1.0, false, KnobScope::Policy,
     "linear: score = ongoing_tokens - alpha * cache_hit_tokens (the lab's CACHE_HIT_ALPHA = 1.0)"},
    {KnobId::CacheRatioGate, "cache_ratio_gate", "fraction", 0, 1, 0.5, false, KnobScope::Policy,
     "unified-gated: the session stays on its affinity instance only if more than this share of its prompt is cached "
     "there (the lab's hard-coded 0.5)"},
    {KnobId::LmetricDecodeWeight, "lmetric_decode_weight", "score/token", 0, 1000, 0.0, false, KnobScope::Policy,
     "unified-gated: decode-load penalty in the LMetric fallback, + weight * ongoing_decode_tokens, with num_requests "
     "floored at 1 (the lab's B' ablation; unified_ab used 0.01, 0 = off)"},
    {KnobId::LeastworkKappa, "leastwork_kappa", "1/token", 0, 1, 2.5e-6, false, KnobScope::Policy,
     "leastwork-kappa: score = prefill work x (1 + kappa x ongoing_decode_tokens) (the lab's 2.5e-6, derived from H20 "
     "bandwidth)"},
    {KnobId::ColdDBonus, "cold_d_bonus", "score", 0, 10000, 0, false, KnobScope::Policy,
     "kv-aware: bonus for a D with no assigned sessions, fresh sessions only (the lab's --kvcache-cold-d-bonus; 0 = "
     "off)"},
    // The live router's memory of what it routed (core/run/UnreportedRequests.h): a client that
    // routes and never reports must not hold load and hashes for ever.
    {KnobId::UnreportedExpiryS, "unreported_expiry_s", "s", 1, 604800, 1800, false, KnobScope::Shared,
     "Live router: a routed request with no report after this long is forgotten, its load and hashes with it "
     "(3x the lab's 600-s request timeout)"},
    {KnobId::MaxTrackedRequests, "max_tracked_requests", "requests", 1, 10000000, 65536, true, KnobScope::Shared,
     "Live router: unreported requests kept at most, overall; the oldest is forgotten first"},
    {KnobId::MaxTrackedPerWorker, "max_tracked_per_worker", "requests", 1, 10000000, 16384, true, KnobScope::Shared,
     "Live router: unreported requests kept at most per worker; the oldest is forgotten first"},
    {KnobId::MaxTrackedBlockHashes, "max_tracked_block_hashes", "hashes", 1024, 1e9, 4194304, true, KnobScope::Shared,
     "Live router: block hashes the unreported requests may hold (8 bytes each, and a count per worker under "
     "dynamo-kv: ~100 MiB by default)"},
    {KnobId::SessionIdleS, "session_idle_s", "s", 1, 2592000, 7200, false, KnobScope::Shared,
     "Live router: a session not routed for this long is forgotten (its binding and residence)"},
    {KnobId::MaxTrackedSessions, "max_tracked_sessions", "sessions", 1024, 1e8, 262144, true, KnobScope::Shared,
     "Live router: sessions remembered at most; over it, the quarter least recently routed is forgotten"},
};
static_assert(std::size(kSpecs) == static_cast<std::size_t>(KnobId::Count));

std::string formatValue(double v) { return shortestText(v); }

}  // namespace

KnobRegistry::KnobRegistry() {
  for (const auto& s : kSpecs) values_[static_cast<std::size_t>(s.id)] = s.default_value;
}

std::span<const KnobSpec> KnobRegistry::specs() { return kSpecs; }

const KnobSpec& KnobRegistry::spec(KnobId id) { return kSpecs[static_cast<std::size_t>(id)]; }

std::optional<KnobId> KnobRegistry::find(std::string_view name) {
  for (const auto& s : kSpecs)
    if (s.name == name) return s.id;
  return std::nullopt;
}

std::string KnobRegistry::validNames() {
  std::string out;
  for (const auto& s : kSpecs) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

KnobRegistry::Result KnobRegistry::apply(const std::map<std::string, double>& changes, const ChangeAuthor& author) {
  Result r;
  for (const auto& [name, value] : changes) {
    const auto id = find(name);
    if (!id) {
      r.ok = false;
      r.error = "unknown knob '" + name + "'; valid knobs: " + validNames();
      return r;
    }
    const auto& s = spec(*id);
    if (!std::isfinite(value) || value < s.min || value > s.max) {
      r.ok = false;
      r.error = "knob '" + name + "': " + formatValue(value) + " is out of range [" + formatValue(s.min) + ", " +
                formatValue(s.max) + "] " + std::string(s.unit);
      return r;
    }
    if (s.integer && value != std::floor(value)) {
      r.ok = false;
      r.error =
          "knob '" + name + "': expected a whole number of " + std::string(s.unit) + ", got " + formatValue(value);
      return r;
    }
  }
  for (const auto& [name, value] : changes) {
    const auto id = *find(name);
    double& slot = values_[static_cast<std::size_t>(id)];
    if (slot != value) r.changes.push_back(KnobChanged{name, slot, value, author.who, author.origin});
    slot = value;
  }
  return r;
}

std::optional<std::string> KnobRegistry::parseAssignment(std::string_view text, std::map<std::string, double>& into) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return "expected KNOB=VALUE, got '" + std::string(text) + "'";
  const std::string name(text.substr(0, eq));
  const std::string_view value_text = text.substr(eq + 1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
  if (ec != std::errc() || ptr != value_text.data() + value_text.size())
    return "knob '" + name + "': expected a number, got '" + std::string(value_text) + "'";
  into[name] = value;
  return std::nullopt;
}

}  // namespace kvscope
