#pragma once
// Reads SGLang's metrics out of a parsed /metrics body. Accepts the `sglang:`
// prefix (current SGLang) and `sglang_` (exporters that rewrite colons), and the labels model_name,
// engine_type, tp_rank, dp_rank (plus pp_rank, moe_ep_rank). Tensor/pipeline/expert ranks repeat
// the same scheduler's numbers, so the lowest of them is read; DP ranks are separate schedulers,
// so counts are summed over them and ratios averaged. Stateless: counter deltas are the
// WorkerMetricsTracker's job.
#include "core/live/EngineMetrics.h"
#include "core/live/ExpositionParser.h"

namespace kvscope {

class SglangMetricsMapper {
 public:
  static EngineMetrics map(const Exposition& exposition);
};

}  // namespace kvscope
