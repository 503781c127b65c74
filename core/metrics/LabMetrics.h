#pragma once
// The metrics the lab judges runs by (gahow/agentic-kvc replayer/metrics.py, bench_report.py and
// its figures; LAB_CODE.md 2.3), from the event stream alone:
//   apc                    prefix-cache hit rate: cached prompt tokens / prompt tokens, as the engine
//                          counts its hits (vLLM's prefix_cache_hits / prefix_cache_queries)
//   apc_ceiling_intra/any  what an unbounded cache would hit on the same requests, within a session
//                          or across sessions (scripts/compute_apc_upper_bound.py)
//   tpot_s                 (E2E - TTFT) / (output tokens - 1), per request with more than one token
//   uncached_tokens        prompt tokens not served from the cache, per request
//   apc_by_turn            hit rate of each turn index (turns past 100 fold into 100)
//   worker_ttft_p90_s      each worker's TTFT p90: their median and max (the lab's retired hotspot
//                          index was max/median)
//   request_balance        max / min completed requests per worker
//   decode_tps, total_tps  output (and input + output) tokens of completed requests per second of
//                          makespan (first request fired to last one ended)
//   wall_amplification     makespan / the trace's window (replay.py's amplification)
//   completion_rate        completed / offered requests
//   dispatch_slip_s        fired minus trace time (an early fire, as under burst, counts as 0)
//   request classes        HEAVY: at least 20,000 uncached tokens (HEAVY_THRESHOLD, `>=` in the
//                          proxy); WARM: more than half cached or under 5,000 uncached; MEDIUM: the
//                          rest (analysis/adaptive_prefill_offload_design.md @ d6e47d3)
// Latency-like ones are over completed requests; the hit rates over those whose hit the source
// knows (the simulator always does; a live cluster's logs may not: then they are absent).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/stats/Percentiles.h"

namespace kvscope {

struct RequestClassStats {
  long count = 0;
  std::optional<double> ttft_p90_s, e2e_p90_s;
};

// What the run's workload looked like, from its requests (completed or failed), in the terms of the
// lab's trace characterisation (LAB_CODE.md 1b): a twin's workload is fit to such a table.
struct WorkloadShape {
  long requests = 0, sessions = 0;
  std::optional<SampleSummary> input_tokens, output_tokens;
  std::optional<double> single_turn_share;  // sessions whose only request is turn 1
  // The time between a turn's end and its session's next request (the lab's T_external).
  std::optional<double> inter_turn_p25_s, inter_turn_p50_s, inter_turn_p75_s, inter_turn_p90_s;
  std::optional<double> share_over_32k;  // requests with more than 32,768 input tokens
  // Of what an unbounded cache would reuse, the share within sessions (the lab's intra / cross split).
  std::optional<double> reuse_intra_share;
};

struct LabMetrics {
  std::optional<double> apc, apc_ceiling_intra, apc_ceiling_any;
  std::optional<SampleSummary> tpot_s;
  std::optional<SampleSummary> uncached_tokens;
  std::map<int, double> apc_by_turn;
  std::optional<double> worker_ttft_p90_median_s, worker_ttft_p90_max_s;
  std::optional<double> request_balance;
  std::optional<double> decode_tps, total_tps;
  std::optional<double> wall_amplification;
  std::optional<double> completion_rate;
  std::optional<SampleSummary> dispatch_slip_s;
  std::map<std::string, RequestClassStats> request_classes;  // "WARM", "MEDIUM", "HEAVY"
  WorkloadShape workload;
  // The uncached-token ECDF for the console: percentile q (0..100) at index q; not in the JSON.
  std::vector<double> uncached_quantiles;
  // Each worker's TTFT p90 (absent: it finished no request) and requests completed, for the
  // console's table; not in the JSON (the median and max are).
  std::vector<std::optional<double>> worker_ttft_p90_s;
  std::vector<long> worker_completed;

  static constexpr int kMaxTurnIndex = 100;
  static constexpr std::int64_t kHeavyNewTokens = 20000;
  static constexpr std::int64_t kWarmNewTokens = 5000;
  static constexpr std::int64_t kLongInputTokens = 32768;
  static const char* classOf(std::int64_t input_tokens, std::int64_t cached_tokens);

  // Into a summary's JSON object, top-level keys as named above (null when unknown); back again.
  void addTo(nlohmann::json& j) const;
  static LabMetrics fromJson(const nlohmann::json& j);
  // The lines `simulate` prints under the latency table.
  std::string table() const;
};

}  // namespace kvscope
