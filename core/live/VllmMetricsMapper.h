#pragma once
// Reads vLLM's metrics (vllm/v1/metrics/loggers.py, PrometheusStatLogger) out of a parsed /metrics
// body into the same EngineMetrics SGLang's give. Accepts `vllm:` and `vllm_` (exporters that rewrite
// colons). vLLM labels every series with model_name and engine (the data-parallel engine index):
// counts are summed over engines and ratios averaged, as for SGLang's DP ranks. Names of earlier
// versions are read too (gpu_cache_usage_perc, gpu_prefix_cache_*, time_per_output_token_seconds);
// tests/data/upstream_metrics/README.md lists them with the versions they come from. Stateless.
#include "core/live/EngineMetrics.h"
#include "core/live/ExpositionParser.h"

namespace kvscope {

class VllmMetricsMapper {
 public:
  static EngineMetrics map(const Exposition& exposition);
};

// The engine whose metrics a body holds, by its families' prefixes (vllm: or sglang:); nullopt
// when it has neither.
std::optional<EngineKind> detectEngine(const Exposition& exposition);
// The mapper of `engine`.
EngineMetrics mapEngineMetrics(EngineKind engine, const Exposition& exposition);

}  // namespace kvscope
