#include "core/live/SglangMetricsMapper.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace kvscope {

namespace {

enum class Across { Sum, Mean };  // how DP ranks combine

struct GaugeDef {
  std::string_view name;
  std::optional<double> SglangMetrics::*field;
  Across across;
  std::string_view old_name = {};  // the name older SGLang printed; the current one wins if both appear
};

// Names as upstream's metrics collector registers them (without the `sglang:` prefix); the file
// and version of each are in tests/data/upstream_metrics/README.md.
constexpr GaugeDef kGauges[] = {
    {"token_usage", &SglangMetrics::token_usage, Across::Mean},
    {"num_used_tokens", &SglangMetrics::num_used_tokens, Across::Sum},
    {"max_total_num_tokens", &SglangMetrics::max_total_num_tokens, Across::Sum},
    {"kv_available_tokens", &SglangMetrics::kv_available_tokens, Across::Sum},
    {"kv_evictable_tokens", &SglangMetrics::kv_evictable_tokens, Across::Sum},
    {"kv_used_tokens", &SglangMetrics::kv_used_tokens, Across::Sum},
    {"pending_prealloc_token_usage", &SglangMetrics::pending_prealloc_token_usage, Across::Mean},
    {"num_running_reqs", &SglangMetrics::num_running_reqs, Across::Sum},
    {"num_queue_reqs", &SglangMetrics::num_queue_reqs, Across::Sum},
    {"cache_hit_rate", &SglangMetrics::cache_hit_rate, Across::Mean},
    {"gen_throughput", &SglangMetrics::gen_throughput, Across::Sum},
    {"num_retracted_reqs", &SglangMetrics::num_retracted_reqs, Across::Sum},
    {"num_retracted_requests_total", &SglangMetrics::num_retracted_requests_total, Across::Sum},
    {"num_paused_reqs", &SglangMetrics::num_paused_reqs, Across::Sum},
    {"prompt_tokens_total", &SglangMetrics::prompt_tokens_total, Across::Sum},
    {"cached_tokens_total", &SglangMetrics::cached_tokens_total, Across::Sum},
    {"num_decode_prealloc_queue_reqs", &SglangMetrics::num_decode_prealloc_queue_reqs, Across::Sum},
    {"num_decode_transfer_queue_reqs", &SglangMetrics::num_decode_transfer_queue_reqs, Across::Sum},
    {"num_prefill_bootstrap_queue_reqs", &SglangMetrics::num_prefill_bootstrap_queue_reqs, Across::Sum,
     "num_prefill_prealloc_queue_reqs"},
    {"num_prefill_inflight_queue_reqs", &SglangMetrics::num_prefill_inflight_queue_reqs, Across::Sum},
    {"kv_transfer_latency_ms", &SglangMetrics::kv_transfer_latency_ms, Across::Mean},
    {"kv_transfer_speed_gb_s", &SglangMetrics::kv_transfer_speed_gb_s, Across::Mean},
    {"num_transfer_failed_reqs_total", &SglangMetrics::num_transfer_failed_reqs_total, Across::Sum},
    {"num_bootstrap_failed_reqs_total", &SglangMetrics::num_bootstrap_failed_reqs_total, Across::Sum},
};

struct HistDef {
  std::string_view name;
  std::optional<LatencyHistogram> SglangMetrics::*field;  // nullptr: per_stage, keyed by `stage`
};
constexpr HistDef kHistograms[] = {
    {"time_to_first_token_seconds", &SglangMetrics::ttft},
    {"e2e_request_latency_seconds", &SglangMetrics::e2e},
    {"inter_token_latency_seconds", &SglangMetrics::itl},
    {"queue_time_seconds", &SglangMetrics::queue_time},
    {"kv_transfer_latency_ms", &SglangMetrics::kv_transfer_latency_hist},
    {"kv_transfer_speed_gb_s", &SglangMetrics::kv_transfer_speed_hist},
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

struct Parts {  // one histogram of one DP rank
  std::map<double, double> buckets;
  std::optional<double> sum, count;
};

std::optional<double> bound(const std::string* le) {
  if (!le) return std::nullopt;
  if (*le == "+Inf" || *le == "Inf" || *le == "inf") return INFINITY;
  double v = 0;
  const auto [end, ec] = std::from_chars(le->data(), le->data() + le->size(), v);
  if (ec != std::errc() || end != le->data() + le->size() || std::isnan(v)) return std::nullopt;
  return v;
}

}  // namespace

SglangMetrics SglangMetricsMapper::map(const Exposition& exposition) {
  SglangMetrics out;
  std::set<std::string> notes;  // each kind of problem once per scrape
  // Pass 1: the lowest tp/pp/ep rank of each DP rank: the one whose numbers are read.
  std::map<std::string, Rank> lowest;
  std::set<std::string> engine_types;
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
  // Pass 2: values of the chosen ranks, per DP rank.
  std::map<std::string, std::map<std::string, double>> gauges;  // metric -> dp -> value
  std::map<std::string, std::map<std::string, Parts>> hists;     // histogram -> dp -> parts
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
        if (!std::isfinite(s.value) || s.value < 0) {
          notes.insert("line " + std::to_string(s.line) + ": " + s.name + ": expected a finite value >= 0");
          break;
        }
        gauges[std::string(old ? g.old_name : g.name)][dp] = s.value;
      }
      for (const auto& h : kHistograms) {
        if (!name->starts_with(h.name)) continue;
        const std::string_view suffix = name->substr(h.name.size());
        if (suffix != "_sum" && suffix != "_count" && suffix != "_bucket") continue;  // the older gauge form
        std::string key(h.name);
        if (!h.field) key += std::string(1, '\x1f') + (s.label("stage") ? *s.label("stage") : std::string());
        Parts& p = hists[key][dp];
        if (suffix == "_sum") {
          p.sum = s.value;
        } else if (suffix == "_count") {
          p.count = s.value;
        } else if (suffix == "_bucket") {
          if (const auto b = bound(s.label("le"))) p.buckets[*b] = s.value;
        }
      }
    }
  }
  out.ranks = static_cast<int>(lowest.size());
  for (const auto& g : kGauges) {
    auto it = gauges.find(std::string(g.name));
    if (it == gauges.end() && !g.old_name.empty()) it = gauges.find(std::string(g.old_name));
    if (it == gauges.end()) continue;
    double total = 0;
    for (const auto& [dp, v] : it->second) total += v;
    out.*g.field = g.across == Across::Sum ? total : total / static_cast<double>(it->second.size());
  }
  // KV use as the pool sees it: summed tokens over summed capacity beats a mean of ratios.
  if (out.num_used_tokens && out.max_total_num_tokens && *out.max_total_num_tokens > 0)
    out.token_usage = *out.num_used_tokens / *out.max_total_num_tokens;
  for (const auto& [key, per_dp] : hists) {
    const std::string_view name = std::string_view(key).substr(0, key.find('\x1f'));
    LatencyHistogram merged;
    std::map<double, double> buckets;
    bool complete = true;
    for (const auto& [dp, p] : per_dp) {
      if (!p.count || !p.sum || p.buckets.empty() || !std::isinf(p.buckets.rbegin()->first)) complete = false;
      for (const auto& [b, c] : p.buckets) buckets[b] += c;
      merged.sum += p.sum.value_or(0);
      merged.count += p.count.value_or(0);
    }
    if (!complete) {
      notes.insert(std::string(name) + ": incomplete histogram (needs buckets up to +Inf, _sum and _count); not used");
      continue;
    }
    merged.buckets.assign(buckets.begin(), buckets.end());
    for (const auto& h : kHistograms) {
      if (h.name != name) continue;
      if (h.field)
        out.*h.field = std::move(merged);
      else
        out.per_stage[key.substr(name.size() + 1)] = std::move(merged);
      break;
    }
  }
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
