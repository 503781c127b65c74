#pragma once
// A served model's shape, read from its Hugging Face `config.json`, and what it costs in GPU memory:
// the KV cache's bytes per token and the weights' bytes. `kvscope-cli calibrate model` turns it
// into a hardware profile's pool sizes (ModelMemory.h), so the twin never runs one model's cluster
// with another model's KV pool (the E-series served Qwen3-Coder-30B-A3B, whose 96 KiB per token
// is not an 8B model's 128 KiB).
//
// Read: dense decoder-only models (Llama, Qwen2/3, Mistral: attention + a gated MLP), mixtures of
// experts (Qwen2/3-MoE, Mixtral: routed experts, a shared expert, dense layers among them) and
// multi-head latent attention (DeepSeek V2/V3: the KV cache is the compressed latent plus the rope
// key, as SGLang's MLA pool stores it; its weights are counted from the same config).
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace kvscope {

struct ModelShape {
  std::string model_type;  // config.json's "model_type"
  int layers = 0;
  int hidden = 0;
  int attention_heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  long vocab = 0;
  bool tied_embeddings = false;
  int dtype_bytes = 2;  // the weights' element size (bf16/fp16 2, fp32 4, fp8 1)
  // Multi-head latent attention (0 when the model has none): the cached latent and rope key widths.
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  // Parameters, by part (counted from the shape; biases and norms included where the config says).
  std::int64_t embedding_params = 0;  // input embedding + output head (once if tied)
  std::int64_t attention_params = 0;  // every layer's attention
  std::int64_t mlp_params = 0;        // every layer's dense MLP or experts (all experts: all are resident)
  std::int64_t other_params = 0;      // norms, routers

  // Reads a config.json's object; `file` names it in errors (InputError: a missing or non-numeric
  // field, a model type whose weights it cannot count).
  static ModelShape fromConfig(const nlohmann::json& config, const std::string& file);
  // Reads the file (a regular file of at most a few MiB).
  static ModelShape load(const std::string& path);

  std::int64_t parameters() const { return embedding_params + attention_params + mlp_params + other_params; }
  // Bytes the weights take at `dtype_bytes` per parameter.
  double weightBytes() const { return static_cast<double>(parameters()) * dtype_bytes; }
  // Bytes one token's KV cache takes in every layer at `kv_dtype_bytes` per element: K and V per KV
  // head (layers x kv heads x head dim x 2 x bytes), or MLA's latent + rope key (layers x (rank +
  // rope dim) x bytes). Tensor parallelism `tp` splits the KV heads (not MLA's latent).
  double kvBytesPerToken(int kv_dtype_bytes, int tp = 1) const;
  // One line: "qwen3_moe: 48 layers, 4 KV heads x 128, 30.53 B parameters".
  std::string describe() const;
};

// "bfloat16" -> 2, "float32" -> 4, "fp8"/"float8_e4m3fn" -> 1; 0 for a name it does not know.
int dtypeBytes(const std::string& name);

}  // namespace kvscope
