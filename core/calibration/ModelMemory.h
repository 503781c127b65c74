#pragma once
// How many tokens of KV cache an engine leaves for a model on one GPU, by the engine's own rule:
//   SGLang (model_runner's profile_max_num_token / profile_available_bytes):
//       rest = free_after_load - free_at_start x (1 - mem_fraction_static)
//            = mem_fraction_static x free_at_start - weights
//   vLLM (gpu_worker's determine_available_memory):
//       kv = total x gpu_memory_utilization - (weights + peak activations + non-torch memory)
// tokens = floor(kv bytes / the model's KV bytes per token). free_at_start is the GPU's memory less
// the CUDA context; the engine profiles both at start, so these are estimates of what its log prints
// (SGLang: max_total_num_tokens; vLLM: "GPU KV cache size: N tokens"), which wins where it is known.
#include <string>
#include <string_view>

#include "core/calibration/ModelShape.h"

namespace kvscope {

enum class ServingEngine { Sglang, Vllm };
const char* toString(ServingEngine e);

// A GPU's memory as nvidia-smi reports it (MiB), by name: "h200", "h100", "h20", "a100"; 0 if unknown.
double gpuMemoryMib(std::string_view name);

struct MemoryBudget {
  ServingEngine engine = ServingEngine::Sglang;
  double gpu_bytes = 0;       // the GPU's memory
  double context_bytes = 0;   // taken before the engine profiles (CUDA context, NCCL)
  double fraction = 0.8;      // mem_fraction_static (SGLang) or gpu_memory_utilization (vLLM)
  double reserved_bytes = 0;  // vLLM: peak activations + non-torch memory (SGLang keeps them in 1 - fraction)
  int kv_dtype_bytes = 2;
  int tp = 1;  // tensor parallelism: the weights and KV heads split over this many GPUs

  struct Pool {
    double free_at_start = 0;
    double weights = 0;  // per GPU
    double kv_bytes = 0;
    double kv_bytes_per_token = 0;
    long tokens = 0;      // 0 when the weights leave no room
    std::string formula;  // the rule with the numbers in it, for the profile's record
  };
  Pool pool(const ModelShape& model) const;
};

}  // namespace kvscope
