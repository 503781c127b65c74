#include "core/live/SglangMetricsMapper.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "core/live/MetricsFold.h"

namespace kvscope {

namespace {

struct GaugeDef {
  std::string_view name;
  std::optional<double> EngineMetrics::*field;
  Across across;
  std::string_view old_name = {};  // the name older SGLang printed; the current one wins if both appear
};

// Names as upstream's metrics collector registers them (without the `sglang:` prefix); the file
// and version of each are in tests/data/upstream_metrics/README.md.
constexpr GaugeDef kGauges[] = {
    {"token_usage", &EngineMetrics::token_usage, Across::Mean},
    {"num_used_tokens", &EngineMetrics::num_used_tokens, Across::Sum},
    {"max_total_num_tokens", &EngineMetrics::max_total_num_tokens, Across::Sum},
    {"kv_available_tokens", &EngineMetrics::kv_available_tokens, Across::Sum},
    {"kv_evictable_tokens", &EngineMetrics::kv_evictable_tokens, Across::Sum},
    {"kv_used_tokens", &EngineMetrics::kv_used_tokens, Across::Sum},
    {"pending_prealloc_token_usage", &EngineMetrics::pending_prealloc_token_usage, Across::Mean},
    {"num_running_reqs", &EngineMetrics::num_running_reqs, Across::Sum},
    {"num_queue_reqs", &EngineMetrics::num_queue_reqs, Across::Sum},
    {"cache_hit_rate", &EngineMetrics::cache_hit_rate, Across::Mean},
    {"gen_throughput", &EngineMetrics::gen_throughput, Across::Sum},
    {"num_retracted_reqs", &EngineMetrics::num_retracted_reqs, Across::Sum},
    {"num_retracted_requests_total", &EngineMetrics::num_retracted_requests_total, Across::Sum},
    {"num_paused_reqs", &EngineMetrics::num_paused_reqs, Across::Sum},
    {"prompt_tokens_total", &EngineMetrics::prompt_tokens_total, Across::Sum},
    {"cached_tokens_total", &EngineMetrics::cached_tokens_total, Across::Sum},
    {"num_decode_prealloc_queue_reqs", &EngineMetrics::num_decode_prealloc_queue_reqs, Across::Sum},
    {"num_decode_transfer_queue_reqs", &EngineMetrics::num_decode_transfer_queue_reqs, Across::Sum},
    {"num_prefill_bootstrap_queue_reqs", &EngineMetrics::num_prefill_bootstrap_queue_reqs, Across::Sum,
     "num_prefill_prealloc_queue_reqs"},
    {"num_prefill_inflight_queue_reqs", &EngineMetrics::num_prefill_inflight_queue_reqs, Across::Sum},
    {"kv_transfer_latency_ms", &EngineMetrics::kv_transfer_latency_ms, Across::Mean},
    {"kv_transfer_speed_gb_s", &EngineMetrics::kv_transfer_speed_gb_s, Across::Mean},
    {"num_transfer_failed_reqs_total", &EngineMetrics::num_transfer_failed_reqs_total, Across::Sum},
    {"num_bootstrap_failed_reqs_total", &EngineMetrics::num_bootstrap_failed_reqs_total, Across::Sum},
};

struct HistDef {
  std::string_view name;
  std::optional<LatencyHistogram> EngineMetrics::*field;  // nullptr: per_stage, keyed by `stage`
};
constexpr HistDef kHistograms[] = {
    {"time_to_first_token_seconds", &EngineMetrics::ttft},
    {"e2e_request_latency_seconds", &EngineMetrics::e2e},
    {"inter_token_latency_seconds", &EngineMetrics::itl},
    {"queue_time_seconds", &EngineMetrics::queue_time},
    {"kv_transfer_latency_ms", &EngineMetrics::kv_transfer_latency_hist},
    {"kv_transfer_speed_gb_s", &EngineMetrics::kv_transfer_speed_hist},
    {"per_stage_req_latency_seconds", nullptr},
};

std::optional<std::string_view> sglangName(std::string_view name) {
  for (const char* prefix : {"sglang:", "sglang_"})
    if (name.starts_with(prefix)) return name.substr(std::strlen(prefix));
  return std::nullopt;
}

struct Rank {
  long tp = 0, pp = 0, ep = 0;
  auto operator<=>(const Rank&) const = default;
};

std::optional<long> rankOf(const MetricSample& s, std::string_view label) {
  const std::string* v = s.label(label);
  if (!v) return 0;
  long n = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || end != v->data() + v->size() || n < 0) return std::nullopt;
  return n;
}

// Pass 1 of map(): each DP rank's lowest tp/pp/ep rank, the one whose numbers are read. A sample
// with a rank label that is not a whole number >= 0 is noted and left out.
std::map<std::string, Rank> lowestRanks(const Exposition& exposition, std::set<std::string>& notes) {
  std::map<std::string, Rank> lowest;
  for (const auto& f : exposition.families) {
    for (const auto& s : f.samples) {
      if (!sglangName(s.name)) continue;
      const auto tp = rankOf(s, "tp_rank"), pp = rankOf(s, "pp_rank"), ep = rankOf(s, "moe_ep_rank");
      if (!tp || !pp || !ep || !rankOf(s, "dp_rank")) {
        notes.insert("line " + std::to_string(s.line) + ": " + s.name +
                     ": expected tp_rank, pp_rank, moe_ep_rank and dp_rank to be whole numbers >= 0");
        continue;
      }
      const std::string dp = s.label("dp_rank") ? *s.label("dp_rank") : "";
      const Rank r{*tp, *pp, *ep};
      auto [it, fresh] = lowest.emplace(dp, r);
      if (!fresh && r < it->second) it->second = r;
    }
  }
  return lowest;
}

// The chosen ranks' values folded into one per worker: gauges as each one folds (the current name
// before the older one), histograms merged, and the derived token usage and prefix-cache counters.
void foldRanks(EngineMetrics& out, const RankedValues& gauges, const RankedHistograms& hists,
               std::set<std::string>& notes) {
  for (const auto& g : kGauges) {
    auto v = gauges.fold(std::string(g.name), g.across);
    if (!v && !g.old_name.empty()) v = gauges.fold(std::string(g.old_name), g.across);
    if (v) out.*g.field = v;
  }
  // KV use as the pool sees it: summed tokens over summed capacity beats a mean of ratios.
  if (out.num_used_tokens && out.max_total_num_tokens && *out.max_total_num_tokens > 0)
    out.token_usage = *out.num_used_tokens / *out.max_total_num_tokens;
  // The tokenizer's prompt and cached tokens are SGLang's prefix-cache accounting.
  out.prefix_queried_tokens_total = out.prompt_tokens_total;
  out.prefix_hit_tokens_total = out.cached_tokens_total;
  for (const auto& [key, per_dp] : hists.all()) {
    const std::string_view name = std::string_view(key).substr(0, key.find('\x1f'));
    auto merged = hists.merge(key, name, notes);
    if (!merged) continue;
    for (const auto& h : kHistograms) {
      if (h.name != name) continue;
      if (h.field)
        out.*h.field = std::move(merged);
      else
        out.per_stage[key.substr(name.size() + 1)] = std::move(*merged);
      break;
    }
  }
}

}  // namespace

const char* toString(EngineKind e) { return e == EngineKind::Vllm ? "vllm" : "sglang"; }

EngineMetrics SglangMetricsMapper::map(const Exposition& exposition) {
  EngineMetrics out;
  std::set<std::string> notes;  // each kind of problem once per scrape
  // Pass 1: the lowest tp/pp/ep rank of each DP rank: the one whose numbers are read.
  std::map<std::string, Rank> lowest = lowestRanks(exposition, notes);
  std::set<std::string> engine_types;
  // Pass 2: values of the chosen ranks, per DP rank.
  RankedValues gauges;
  RankedHistograms hists;
  std::set<std::string> read;  // families read
  for (const auto& f : exposition.families) {
    for (const auto& s : f.samples) {
      const auto name = sglangName(s.name);
      if (!name) continue;
      const auto tp = rankOf(s, "tp_rank"), pp = rankOf(s, "pp_rank"), ep = rankOf(s, "moe_ep_rank");
      if (!tp || !pp || !ep || !rankOf(s, "dp_rank")) continue;
      const std::string dp = s.label("dp_rank") ? *s.label("dp_rank") : "";
      if (Rank{*tp, *pp, *ep} != lowest[dp]) continue;
      if (const std::string* e = s.label("engine_type")) engine_types.insert(*e);
      if (const std::string* m = s.label("model_name"); m && out.model_name.empty()) out.model_name = *m;
      for (const auto& g : kGauges) {
        const bool old = !g.old_name.empty() && *name == g.old_name;
        if (*name != g.name && !old) continue;
        read.insert(f.name);
        if (acceptableValue(s, notes)) gauges.set(std::string(old ? g.old_name : g.name), dp, s.value);
        break;
      }
      for (const auto& h : kHistograms) {
        if (!name->starts_with(h.name)) continue;
        std::string key(h.name);
        if (!h.field) key += std::string(1, '\x1f') + (s.label("stage") ? *s.label("stage") : std::string());
        HistogramParts probe;
        if (!probe.add(name->substr(h.name.size()), s)) continue;  // the older gauge form
        hists.at(key, dp).add(name->substr(h.name.size()), s);
        read.insert(f.name);
      }
    }
  }
  out.ranks = static_cast<int>(lowest.size());
  foldRanks(out, gauges, hists, notes);
  for (const auto& f : exposition.families)
    if (!read.contains(f.name)) out.unread_families.push_back(f.name);
  if (engine_types.size() > 1) {
    std::string all;
    for (const auto& e : engine_types) all += (all.empty() ? "" : ", ") + e;
    notes.insert("several engine_type values in one /metrics (" + all + "); numbers were summed");
  }
  if (!engine_types.empty()) out.engine_type = *engine_types.begin();
  if (!out.any()) notes.insert("no sglang: or sglang_ metrics in the body (is this an SGLang worker?)");
  out.notes.assign(notes.begin(), notes.end());
  return out;
}

}  // namespace kvscope
