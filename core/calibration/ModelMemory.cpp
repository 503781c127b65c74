#include "core/calibration/ModelMemory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvscope {

const char* toString(ServingEngine e) { return e == ServingEngine::Vllm ? "vllm" : "sglang"; }

double gpuMemoryMib(std::string_view name) {
  // nvidia-smi's "Total" per board (MiB): what the engines' profilers start from.
  struct Row {
    std::string_view name;
    double mib;
  };
  static constexpr Row kRows[] = {{"h200", 143771}, {"h100", 81559}, {"h800", 81559}, {"h20", 97871},
                                  {"a100", 81920},  {"a800", 81920}, {"l40s", 46068}};
  for (const Row& r : kRows)
    if (r.name == name) return r.mib;
  return 0;
}

MemoryBudget::Pool MemoryBudget::pool(const ModelShape& model) const {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  Pool p;
  p.free_at_start = gpu_bytes - context_bytes;
  p.weights = model.weightBytes() / std::max(1, tp);
  p.kv_bytes_per_token = model.kvBytesPerToken(kv_dtype_bytes, tp);
  char buf[400];
  if (engine == ServingEngine::Sglang) {
    p.kv_bytes = fraction * p.free_at_start - p.weights;
    std::snprintf(buf, sizeof buf,
                  "SGLang: mem_fraction_static %.2f x free at start %.2f GiB - weights %.2f GiB = %.2f GiB of KV",
                  fraction, p.free_at_start / kGiB, p.weights / kGiB, p.kv_bytes / kGiB);
  } else {
    p.kv_bytes = fraction * gpu_bytes - p.weights - reserved_bytes - context_bytes;
    std::snprintf(buf, sizeof buf,
                  "vLLM: gpu_memory_utilization %.2f x %.2f GiB - weights %.2f GiB - activations and non-torch "
                  "%.2f GiB - context %.2f GiB = %.2f GiB of KV",
                  fraction, gpu_bytes / kGiB, p.weights / kGiB, reserved_bytes / kGiB, context_bytes / kGiB,
                  p.kv_bytes / kGiB);
  }
  p.formula = buf;
  p.tokens =
      p.kv_bytes > 0 && p.kv_bytes_per_token > 0 ? static_cast<long>(std::floor(p.kv_bytes / p.kv_bytes_per_token)) : 0;
  return p;
}

}  // namespace kvscope
