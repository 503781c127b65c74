#include "core/live/VllmMetricsMapper.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include "core/live/MetricsFold.h"
#include "core/live/SglangMetricsMapper.h"

namespace kvscope {

namespace {

struct ValueDef {
  std::string_view name;  // the sample name without the `vllm:` prefix (counters with their _total)
  std::optional<double> EngineMetrics::*field;
  Across across;
  std::string_view old_name = {};  // an earlier version's name; the current one wins if both appear
};

// From vllm/v1/metrics/loggers.py (commits in tests/data/upstream_metrics/README.md).
constexpr ValueDef kValues[] = {
    {"num_requests_running", &EngineMetrics::num_running_reqs, Across::Sum},
    {"num_requests_waiting", &EngineMetrics::num_queue_reqs, Across::Sum},
    // Deprecated in 0.9, gone later: gpu_cache_usage_perc.
    {"kv_cache_usage_perc", &EngineMetrics::token_usage, Across::Mean, "gpu_cache_usage_perc"},
    // gpu_prefix_cache_* were the names before 0.9 (counted in blocks in 0.8; see map()).
    {"prefix_cache_queries_total", &EngineMetrics::prefix_queried_tokens_total, Across::Sum,
     "gpu_prefix_cache_queries_total"},
    {"prefix_cache_hits_total", &EngineMetrics::prefix_hit_tokens_total, Across::Sum, "gpu_prefix_cache_hits_total"},
    {"external_prefix_cache_queries_total", &EngineMetrics::external_queried_tokens_total, Across::Sum},
    {"external_prefix_cache_hits_total", &EngineMetrics::external_hit_tokens_total, Across::Sum},
    {"num_preemptions_total", &EngineMetrics::num_preemptions_total, Across::Sum},
    {"prompt_tokens_total", &EngineMetrics::prompt_tokens_total, Across::Sum},
    {"prompt_tokens_cached_total", &EngineMetrics::cached_tokens_total, Across::Sum},
    {"generation_tokens_total", &EngineMetrics::generation_tokens_total, Across::Sum},
};

struct HistDef {
  std::string_view name;
  std::optional<LatencyHistogram> EngineMetrics::*field;
  std::string_view old_name = {};
};
constexpr HistDef kHistograms[] = {
    {"time_to_first_token_seconds", &EngineMetrics::ttft},
    {"e2e_request_latency_seconds", &EngineMetrics::e2e},
    // Before the split, time_per_output_token_seconds was observed per token interval: the ITL.
    {"inter_token_latency_seconds", &EngineMetrics::itl, "time_per_output_token_seconds"},
    {"request_time_per_output_token_seconds", &EngineMetrics::tpot},
    {"request_queue_time_seconds", &EngineMetrics::queue_time},
    {"request_prefill_time_seconds", &EngineMetrics::prefill_time},
};

std::optional<std::string_view> vllmName(std::string_view name) {
  for (const char* prefix : {"vllm:", "vllm_"})
    if (name.starts_with(prefix)) return name.substr(std::strlen(prefix));
  return std::nullopt;
}

std::optional<double> number(const std::string* text) {
  if (!text) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// The engines' values folded into one per worker: each value as it folds (the current name before
// an earlier version's, noting vLLM 0.8's block-counted prefix cache), the prompt tokens by source,
// and the histograms merged.
void foldEngines(EngineMetrics& out, const RankedValues& values, const RankedHistograms& hists,
                 std::set<std::string>& notes) {
  for (const auto& v : kValues) {
    auto value = values.fold(std::string(v.name), v.across);
    const bool old = !value && !v.old_name.empty();
    if (old) value = values.fold(std::string(v.old_name), v.across);
    if (!value) continue;
    out.*v.field = value;
    // vLLM 0.8 counted gpu_prefix_cache_* in blocks; 0.9+ prints the token-counted new names
    // beside them, so the old names alone mean blocks.
    if (old && v.field == &EngineMetrics::prefix_queried_tokens_total) out.prefix_block_counted = true;
  }
  for (const auto& source : {"local_compute", "local_cache_hit", "external_kv_transfer"})
    if (const auto v = values.fold(std::string("by_source\x1f") + source, Across::Sum))
      out.prompt_tokens_by_source[source] = *v;
  for (const auto& h : kHistograms) {
    auto merged = hists.merge(std::string(h.name), h.name, notes);
    if (!merged && !h.old_name.empty()) merged = hists.merge(std::string(h.old_name), h.old_name, notes);
    if (merged) out.*h.field = std::move(merged);
  }
}

// The KV pool from the cache config's labels: (num_gpu_blocks, block_size) per engine.
void setPool(EngineMetrics& out, const std::map<std::string, std::pair<double, double>>& pools) {
  // The API server adds up its engines' blocks before it publishes the cache config
  // (wait_for_engine_startup), so every engine's label holds the total already: not summed again.
  double blocks = 0, size = 0;
  for (const auto& [engine, pool] : pools)
    if (pool.first >= blocks) std::tie(blocks, size) = pool;
  out.num_gpu_blocks = blocks;
  out.kv_block_size = size;
  if (blocks > 0 && size > 0) out.max_total_num_tokens = blocks * size;
}

}  // namespace

EngineMetrics VllmMetricsMapper::map(const Exposition& exposition) {
  EngineMetrics out;
  out.engine = EngineKind::Vllm;
  std::set<std::string> notes;
  std::set<std::string> engines, read;
  RankedValues values;
  RankedHistograms hists;
  std::map<std::string, std::pair<double, double>> pools;  // engine -> (num_gpu_blocks, block_size)
  for (const auto& f : exposition.families) {
    for (const auto& s : f.samples) {
      const auto name = vllmName(s.name);
      if (!name) continue;
      const std::string engine = s.label("engine") ? *s.label("engine") : "";
      if (const std::string* m = s.label("model_name"); m && out.model_name.empty()) out.model_name = *m;
      if (*name == "cache_config_info") {
        // An info metric: the cache config as labels (CacheConfig.metrics_info()), the value 1.
        read.insert(f.name);
        const auto blocks = number(s.label("num_gpu_blocks")), size = number(s.label("block_size"));
        if (blocks && size)
          pools[engine] = {*blocks, *size};
        else if (s.label("num_gpu_blocks") && *s.label("num_gpu_blocks") != "None")
          notes.insert("line " + std::to_string(s.line) + ": " + s.name +
                       ": expected labels num_gpu_blocks and block_size to be numbers >= 0");
        continue;
      }
      if (*name == "prompt_tokens_by_source_total") {
        read.insert(f.name);
        engines.insert(engine);
        if (const std::string* source = s.label("source"); source && acceptableValue(s, notes))
          values.set("by_source\x1f" + *source, engine, s.value);
        continue;
      }
      bool used = false;
      for (const auto& v : kValues) {
        const bool old = !v.old_name.empty() && *name == v.old_name;
        if (*name != v.name && !old) continue;
        used = true;
        if (acceptableValue(s, notes)) values.set(std::string(*name), engine, s.value);
        break;
      }
      for (const auto& h : kHistograms) {
        for (const std::string_view hname : {h.name, h.old_name}) {
          if (hname.empty() || !name->starts_with(hname)) continue;
          const std::string_view suffix = name->substr(hname.size());
          if (hists.at(std::string(hname), engine).add(suffix, s)) used = true;
        }
      }
      if (used) {
        read.insert(f.name);
        engines.insert(engine);
      }
    }
  }
  out.ranks = static_cast<int>(engines.size());
  foldEngines(out, values, hists, notes);
  if (!pools.empty()) setPool(out, pools);
  for (const auto& f : exposition.families)
    if (!read.contains(f.name)) out.unread_families.push_back(f.name);
  if (!out.any()) notes.insert("no vllm: or vllm_ metrics in the body (is this a vLLM server?)");
  out.notes.assign(notes.begin(), notes.end());
  return out;
}

std::optional<EngineKind> detectEngine(const Exposition& exposition) {
  for (const auto& f : exposition.families) {
    if (vllmName(f.name)) return EngineKind::Vllm;
    if (f.name.starts_with("sglang:") || f.name.starts_with("sglang_")) return EngineKind::Sglang;
  }
  return std::nullopt;
}

EngineMetrics mapEngineMetrics(EngineKind engine, const Exposition& exposition) {
  return engine == EngineKind::Vllm ? VllmMetricsMapper::map(exposition) : SglangMetricsMapper::map(exposition);
}

}  // namespace kvscope
