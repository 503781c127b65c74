#pragma once
// One scrape of one engine's /metrics (SGLang or vLLM), reduced to the numbers KVScope shows. Plain
// values; std::nullopt means the worker did not export that metric (older SGLang lacks the
// disaggregation gauges and the kv_*_tokens breakdown, a unified worker never has the disaggregation
// ones, vLLM has neither). Fields are named after SGLang's metrics, which came first; the vLLM name
// each one is read from is in VllmMetricsMapper.cpp. Names and meanings are upstream's: see
// tests/data/upstream_metrics/README.md for the files and versions they come from.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvscope {

// A latency histogram summed over the worker's ranks: cumulative (upper bound, count) pairs.
struct LatencyHistogram {
  std::vector<std::pair<double, double>> buckets;  // sorted by bound, the last is +Inf
  double sum = 0;
  double count = 0;
};

enum class EngineKind : std::uint8_t { Sglang, Vllm };
const char* toString(EngineKind);

struct EngineMetrics {
  EngineKind engine = EngineKind::Sglang;
  std::string model_name;
  std::string engine_type;  // "unified", "prefill", "decode", or "" when the label is absent
  int ranks = 0;            // DP ranks (label sets) the numbers were summed over

  std::optional<double> token_usage;  // KV pool use, 0..1 (num_used / capacity)
  // max_total - available - evictable: tokens locked by requests or held by sessions, not the
  // evictable radix cache (scheduler's _get_token_info).
  std::optional<double> num_used_tokens;
  std::optional<double> max_total_num_tokens;  // KV pool capacity in tokens
  // The pool's breakdown (v0.5.11+, PR #22726): free, evictable radix cache, actively used.
  std::optional<double> kv_available_tokens;
  std::optional<double> kv_evictable_tokens;
  std::optional<double> kv_used_tokens;
  std::optional<double> pending_prealloc_token_usage;  // decode: tokens waiting for preallocation, 0..1
  std::optional<double> num_running_reqs;
  std::optional<double> num_queue_reqs;
  std::optional<double> cache_hit_rate;
  std::optional<double> gen_throughput;  // tokens/s
  // Retraction (decode out of memory) and pause: gauges count the requests since the previous
  // batch log (the scheduler zeroes its count after each log); the counter is cumulative.
  std::optional<double> num_retracted_reqs;
  std::optional<double> num_retracted_requests_total;  // counter
  std::optional<double> num_paused_reqs;
  // vLLM: requests preempted for want of KV blocks (and recomputed later): the same mechanism as
  // SGLang's retraction, so the tracker counts them as retractions.
  std::optional<double> num_preemptions_total;  // counter
  // Tokenizer-side counters: prompt tokens and the part of them served from the prefix cache.
  std::optional<double> prompt_tokens_total;  // counter
  std::optional<double> cached_tokens_total;  // counter
  // The engine's own prefix-cache hit accounting, in tokens (the rate the lab calls APC): SGLang's
  // prompt/cached tokens above, vLLM's prefix_cache_queries / prefix_cache_hits (counted in blocks
  // before vLLM 0.9: block_counted says so). External: tokens a KV connector (Mooncake, LMCache)
  // was asked for and found in another instance's cache (vLLM's external_prefix_cache_*).
  std::optional<double> prefix_queried_tokens_total;    // counter
  std::optional<double> prefix_hit_tokens_total;        // counter
  std::optional<double> external_queried_tokens_total;  // counter
  std::optional<double> external_hit_tokens_total;      // counter
  bool prefix_block_counted = false;
  std::map<std::string, double> prompt_tokens_by_source;  // vLLM: local_compute, local_cache_hit, external_kv_transfer
  std::optional<double> generation_tokens_total;          // counter
  // The KV pool as the engine's cache config says it (vLLM's cache_config_info labels).
  std::optional<double> kv_block_size;   // tokens per block
  std::optional<double> num_gpu_blocks;  // blocks, summed over DP engines
  // Disaggregation (present on prefill/decode engines of recent SGLang).
  std::optional<double> num_decode_prealloc_queue_reqs;
  std::optional<double> num_decode_transfer_queue_reqs;
  // num_prefill_bootstrap_queue_reqs, or its old name num_prefill_prealloc_queue_reqs.
  std::optional<double> num_prefill_bootstrap_queue_reqs;
  std::optional<double> num_prefill_inflight_queue_reqs;
  // Older SGLang: gauges holding the last transfer's numbers; newer: histograms (below).
  std::optional<double> kv_transfer_latency_ms;
  std::optional<double> kv_transfer_speed_gb_s;
  std::optional<double> num_transfer_failed_reqs_total;   // counter
  std::optional<double> num_bootstrap_failed_reqs_total;  // counter

  std::optional<LatencyHistogram> ttft;        // time_to_first_token_seconds
  std::optional<LatencyHistogram> e2e;         // e2e_request_latency_seconds
  std::optional<LatencyHistogram> itl;         // inter_token_latency_seconds
  std::optional<LatencyHistogram> queue_time;  // queue_time_seconds
  std::optional<LatencyHistogram>
      tpot;  // vLLM: request_time_per_output_token_seconds (older: time_per_output_token_seconds)
  std::optional<LatencyHistogram> prefill_time;              // vLLM: request_prefill_time_seconds
  std::optional<LatencyHistogram> kv_transfer_latency_hist;  // kv_transfer_latency_ms (a histogram since PR #19009)
  std::optional<LatencyHistogram> kv_transfer_speed_hist;    // kv_transfer_speed_gb_s (likewise)
  std::map<std::string, LatencyHistogram> per_stage;         // per_stage_req_latency_seconds by its `stage` label

  std::vector<std::string> notes;            // why something could not be mapped (shown as "degraded")
  std::vector<std::string> unread_families;  // the engine's families this mapper does not read (for `scrape`)
  bool any() const { return ranks > 0; }
};

}  // namespace kvscope
