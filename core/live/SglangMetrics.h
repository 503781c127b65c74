#pragma once
// One scrape of one SGLang worker's /metrics, reduced to the numbers KVScope shows (issue 5
// section 2). Plain values; std::nullopt means the worker did not export that metric (older SGLang
// lacks the disaggregation gauges, a unified worker never has them).
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

struct SglangMetrics {
  std::string model_name;
  std::string engine_type;  // "unified", "prefill", "decode", or "" when the label is absent
  int ranks = 0;            // DP ranks (label sets) the numbers were summed over

  std::optional<double> token_usage;           // KV pool use, 0..1
  std::optional<double> num_used_tokens;
  std::optional<double> max_total_num_tokens;  // KV pool capacity in tokens
  std::optional<double> num_running_reqs;
  std::optional<double> num_queue_reqs;
  std::optional<double> cache_hit_rate;
  std::optional<double> gen_throughput;        // tokens/s
  // Disaggregation (present on prefill/decode engines of recent SGLang).
  std::optional<double> num_decode_prealloc_queue_reqs;
  std::optional<double> num_decode_transfer_queue_reqs;
  std::optional<double> num_prefill_prealloc_queue_reqs;
  std::optional<double> num_prefill_inflight_queue_reqs;
  std::optional<double> kv_transfer_latency_ms;
  std::optional<double> kv_transfer_speed_gb_s;
  std::optional<double> num_transfer_failed_reqs_total;   // counter
  std::optional<double> num_bootstrap_failed_reqs_total;  // counter

  std::optional<LatencyHistogram> ttft;  // time_to_first_token_seconds
  std::optional<LatencyHistogram> e2e;   // e2e_request_latency_seconds

  std::vector<std::string> notes;  // why something could not be mapped (shown as "degraded")
  bool any() const { return ranks > 0; }
};

}  // namespace kvscope
