// `kvscope-cli calibrate model` (docs/calibration.md section 1b): a hardware profile's KV pools
// derived from the served model's config.json, the GPU's memory and the engine's memory fraction,
// so that the twin runs a cluster with its own model's pool (core/calibration/ModelShape,
// ModelMemory). Constants that are timings stay the base profile's, said in the written record.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/CalibrateCommands.h"
#include "core/calibration/ModelMemory.h"
#include "core/calibration/ModelShape.h"
#include "core/io/AtomicFile.h"
#include "core/model/Error.h"
#include "core/scenario/HardwareProfile.h"

namespace kvscope::cli {

namespace {

struct ModelArgs {
  std::string config;
  std::string gpu = "h200";
  double gpu_mib = 0;
  std::string engine = "sglang";
  double decode_fraction = 0.8;
  double prefill_fraction = 0;  // 0: the decode fraction
  double context_gib = 0.5;
  double reserved_gib = 0;
  std::string kv_dtype = "auto";
  std::string dtype;
  int tp = 1;
  std::string base = "h200";
  std::string name;
  std::string out;
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

nlohmann::ordered_json poolRecord(const MemoryBudget::Pool& p, double fraction) {
  return {{"fraction", fraction},
          {"free_at_start_gib", p.free_at_start / kGiB},
          {"kv_gib", p.kv_bytes / kGiB},
          {"tokens", p.tokens},
          {"formula", p.formula}};
}

}  // namespace

Command addCalibrateModel(CLI::App& calibrate) {
  auto* sub = calibrate.add_subcommand(
      "model", "Derive a profile's KV pools from a model's config.json, the GPU's memory and the engine's fraction");
  sub->footer(
      "KV bytes per token = layers x KV heads x head dim x 2 (K, V) x the KV dtype's bytes (MLA: layers x\n"
      "(latent + rope dim) x bytes); weights = parameters counted from the shape x the dtype's bytes (every\n"
      "expert of a mixture). SGLang's pool: mem_fraction_static x (GPU memory - context) - weights; vLLM's:\n"
      "gpu_memory_utilization x GPU memory - weights - --reserved-gib - context. Tokens = pool / bytes per\n"
      "token. Timing constants stay --base's. An engine's log (SGLang max_total_num_tokens, vLLM \"GPU KV\n"
      "cache size\") is the measurement; this is the estimate to use until one is known.\n"
      "  kvscope-cli calibrate model Qwen3-Coder-30B-A3B/config.json --gpu h200 --engine sglang \\\n"
      "      --decode-fraction 0.8 --prefill-fraction 0.7 --base h200 -o h200-qwen3-coder-30b.json");
  auto a = std::make_shared<ModelArgs>();
  sub->add_option("config", a->config, "The model's Hugging Face config.json")->required();
  sub->add_option("--gpu", a->gpu, "The GPU: h200, h100, h800, h20, a100, a800, l40s (its memory as nvidia-smi says)")
      ->capture_default_str();
  sub->add_option("--gpu-memory-mib", a->gpu_mib, "The GPU's memory in MiB, for a GPU --gpu does not know")
      ->check(CLI::Range(1.0, 1e7));
  sub->add_option("--engine", a->engine, "sglang or vllm: whose memory rule")
      ->check(CLI::IsMember({"sglang", "vllm"}))
      ->capture_default_str();
  sub->add_option("--decode-fraction", a->decode_fraction,
                  "The decode (or colocated) workers' mem_fraction_static / gpu_memory_utilization")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  sub->add_option("--prefill-fraction", a->prefill_fraction, "The prefill workers' fraction (default: the decode one)")
      ->check(CLI::Range(0.01, 1.0));
  sub->add_option("--context-gib", a->context_gib, "Memory taken before the engine profiles (CUDA context)")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  sub->add_option("--reserved-gib", a->reserved_gib,
                  "vLLM: peak activations + non-torch memory its profiling run finds (SGLang keeps these in 1 - "
                  "fraction)")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  sub->add_option("--kv-dtype", a->kv_dtype, "The KV cache's dtype: auto (the model's), fp8, bf16")
      ->capture_default_str();
  sub->add_option("--dtype", a->dtype, "The served weights' dtype when config.json's is not it (e.g. bfloat16)");
  sub->add_option("--tp", a->tp, "Tensor parallelism: weights and KV heads split over this many GPUs")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->add_option("--base", a->base, "The profile whose timing constants are kept (a bundled name or a .json file)")
      ->capture_default_str();
  sub->add_option("--name", a->name, "The written profile's name (default: the output file's name)");
  sub->add_option("-o,--output", a->out, "The profile to write (.json; written whole or not at all)")->required();
  return [a]() -> int {
    std::string error;
    if (!AtomicFile::target(a->out, &error)) throw InputError(error);
    ModelShape model = ModelShape::load(a->config);
    if (!a->dtype.empty()) {
      model.dtype_bytes = dtypeBytes(a->dtype);
      if (model.dtype_bytes == 0)
        throw UsageError("--dtype '" + a->dtype + "': expected bfloat16, float16, float32 or fp8");
    }
    MemoryBudget budget;
    budget.engine = a->engine == "vllm" ? ServingEngine::Vllm : ServingEngine::Sglang;
    const double mib = a->gpu_mib > 0 ? a->gpu_mib : gpuMemoryMib(a->gpu);
    if (mib <= 0) throw UsageError("--gpu '" + a->gpu + "': unknown GPU; give --gpu-memory-mib");
    budget.gpu_bytes = mib * 1024.0 * 1024.0;
    budget.context_bytes = a->context_gib * kGiB;
    budget.reserved_bytes = a->reserved_gib * kGiB;
    budget.tp = a->tp;
    budget.kv_dtype_bytes = a->kv_dtype == "auto" ? model.dtype_bytes : dtypeBytes(a->kv_dtype);
    if (budget.kv_dtype_bytes == 0) throw UsageError("--kv-dtype '" + a->kv_dtype + "': expected auto, fp8 or bf16");

    budget.fraction = a->decode_fraction;
    const MemoryBudget::Pool decode = budget.pool(model);
    budget.fraction = a->prefill_fraction > 0 ? a->prefill_fraction : a->decode_fraction;
    const MemoryBudget::Pool prefill = budget.pool(model);
    if (decode.tokens < 1000 || prefill.tokens < 1000)
      throw InputError(a->config + ": the weights (" + std::to_string(decode.weights / kGiB) +
                       " GiB a GPU) leave no KV pool at these fractions on " + std::to_string(mib) + " MiB");

    HardwareProfile profile = HardwareProfile::load(a->base);
    profile.name = a->name.empty() ? std::filesystem::path(a->out).stem().string() : a->name;
    profile.kv_bytes_per_token = decode.kv_bytes_per_token;
    profile.decode_kv_pool_tokens = decode.tokens;
    profile.prefill_kv_pool_tokens = prefill.tokens;
    nlohmann::ordered_json j = profile.toJson();
    nlohmann::ordered_json m;
    m["about"] =
        "Pools derived by `kvscope-cli calibrate model` from the model's config.json, the GPU and the engine's "
        "memory rule; every timing constant is the base profile's.";
    m["config"] = a->config;
    m["shape"] = model.describe();
    m["parameters"] = model.parameters();
    m["weights_gib"] = model.weightBytes() / kGiB;
    m["kv_bytes_per_token"] = decode.kv_bytes_per_token;
    m["gpu"] = a->gpu_mib > 0 ? "custom" : a->gpu;
    m["gpu_memory_mib"] = mib;
    m["engine"] = toString(budget.engine);
    m["tp"] = a->tp;
    m["decode"] = poolRecord(decode, a->decode_fraction);
    m["prefill"] = poolRecord(prefill, budget.fraction);
    m["base"] = a->base;
    j["model"] = m;
    if (!AtomicFile::write(a->out, j.dump(2) + "\n", &error)) throw InputError(error);

    std::printf("model            %s\n", model.describe().c_str());
    std::printf("weights          %.2f GiB (%.3f B parameters x %d bytes)%s\n", model.weightBytes() / kGiB,
                static_cast<double>(model.parameters()) / 1e9, model.dtype_bytes, a->tp > 1 ? ", split by --tp" : "");
    std::printf("KV per token     %.0f bytes (%.1f KiB)\n", decode.kv_bytes_per_token,
                decode.kv_bytes_per_token / 1024);
    std::printf("decode pool      %ld tokens: %s\n", decode.tokens, decode.formula.c_str());
    std::printf("prefill pool     %ld tokens: %s\n", prefill.tokens, prefill.formula.c_str());
    std::printf("wrote %s (timing constants: %s)\n", a->out.c_str(), a->base.c_str());
    return 0;
  };
}

}  // namespace kvscope::cli
