#include "core/calibration/ModelShape.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "core/io/InputFile.h"
#include "core/model/Error.h"

namespace kvscope {

using nlohmann::json;

int dtypeBytes(const std::string& name) {
  if (name == "bfloat16" || name == "float16" || name == "bf16" || name == "fp16" || name == "half") return 2;
  if (name == "float32" || name == "fp32" || name == "float") return 4;
  if (name == "fp8" || name == "float8_e4m3fn" || name == "float8_e5m2" || name == "fp8_e4m3" || name == "fp8_e5m2")
    return 1;
  return 0;
}

namespace {

// Field access naming the file and field on every mistake.
struct ConfigFields {
  const json& j;
  const std::string& file;

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(formatInputError(file, 0, key, what));
  }
  bool has(const char* key) const { return j.contains(key) && !j[key].is_null(); }
  std::int64_t count(const char* key, std::int64_t lo = 1, std::int64_t hi = 100'000'000) const {
    if (!has(key)) fail(key, "missing: the model's shape needs it");
    const json& v = j[key];
    if (!v.is_number_integer() && !v.is_number_unsigned()) fail(key, "expected a whole number");
    const auto n = v.get<std::int64_t>();
    if (n < lo || n > hi)
      fail(key, "expected " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + std::to_string(n));
    return n;
  }
  std::int64_t countOr(const char* key, std::int64_t fallback, std::int64_t lo = 0) const {
    return has(key) ? count(key, lo) : fallback;
  }
  bool flag(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j[key].is_boolean()) fail(key, "expected true or false");
    return j[key].get<bool>();
  }
};

// Layers whose MLP is a mixture of experts: Qwen's `decoder_sparse_step` and `mlp_only_layers`
// (transformers' Qwen3MoeDecoderLayer), DeepSeek's `first_k_dense_replace`.
int moeLayerCount(const ConfigFields& f, int layers) {
  if (f.has("first_k_dense_replace"))
    return std::max(0, layers - static_cast<int>(f.count("first_k_dense_replace", 0, layers)));
  const auto step = f.countOr("decoder_sparse_step", 1, 1);
  std::set<std::int64_t> dense_only;
  if (f.has("mlp_only_layers")) {
    if (!f.j["mlp_only_layers"].is_array()) f.fail("mlp_only_layers", "expected a list of layer indices");
    for (const auto& v : f.j["mlp_only_layers"])
      if (v.is_number_integer()) dense_only.insert(v.get<std::int64_t>());
  }
  int moe = 0;
  for (int i = 0; i < layers; ++i)
    if (!dense_only.contains(i) && (i + 1) % step == 0) ++moe;
  return moe;
}

void countAttention(const ConfigFields& f, ModelShape& m) {
  const std::int64_t h = m.hidden;
  std::int64_t per_layer = 0;
  if (m.kv_lora_rank > 0) {  // DeepSeek's multi-head latent attention (modeling_deepseek.py)
    const auto nope = f.count("qk_nope_head_dim");
    const auto v_dim = f.count("v_head_dim");
    const std::int64_t q_dim = m.attention_heads * (nope + m.qk_rope_head_dim);
    const auto q_rank = f.countOr("q_lora_rank", 0);
    per_layer += q_rank > 0 ? h * q_rank + q_rank + q_rank * q_dim : h * q_dim;
    per_layer += h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank;
    per_layer += static_cast<std::int64_t>(m.kv_lora_rank) * m.attention_heads * (nope + v_dim);
    per_layer += static_cast<std::int64_t>(m.attention_heads) * v_dim * h;
  } else {
    const std::int64_t q = static_cast<std::int64_t>(m.attention_heads) * m.head_dim;
    const std::int64_t kv = static_cast<std::int64_t>(m.kv_heads) * m.head_dim;
    per_layer = h * q + 2 * h * kv + q * h;
    // Qwen2 projects q, k and v with a bias; others say so with attention_bias / qkv_bias.
    if (m.model_type == "qwen2" || m.model_type == "qwen2_moe" || f.flag("attention_bias", false) ||
        f.flag("qkv_bias", false))
      per_layer += q + 2 * kv;
    // Qwen3 normalises q and k per head.
    if (m.model_type == "qwen3" || m.model_type == "qwen3_moe" || f.flag("use_qk_norm", false))
      per_layer += 2 * m.head_dim;
  }
  m.attention_params = per_layer * m.layers;
}

void countMlp(const ConfigFields& f, ModelShape& m) {
  const std::int64_t h = m.hidden;
  const auto gated = [&](std::int64_t inner) { return 3 * h * inner; };  // gate, up and down projections
  const std::int64_t dense_inner = f.countOr("intermediate_size", 0);
  std::int64_t experts = 0, expert_inner = 0, shared_inner = 0;
  if (f.has("n_routed_experts")) {  // DeepSeek
    experts = f.count("n_routed_experts");
    expert_inner = f.count("moe_intermediate_size");
    shared_inner = f.countOr("n_shared_experts", 0) * expert_inner;
  } else if (f.has("num_experts") && f.count("num_experts", 0) > 0) {  // Qwen2/3-MoE
    experts = f.count("num_experts");
    expert_inner = f.count("moe_intermediate_size");
    shared_inner = f.countOr("shared_expert_intermediate_size", 0);
  } else if (f.has("num_local_experts")) {  // Mixtral: each expert is the config's intermediate size
    experts = f.count("num_local_experts");
    expert_inner = f.count("intermediate_size");
  }
  if (experts == 0) {
    if (dense_inner <= 0) f.fail("intermediate_size", "missing: the MLP's width is needed to count the weights");
    m.mlp_params = gated(dense_inner) * m.layers;
    return;
  }
  const int moe_layers = moeLayerCount(f, m.layers);
  const int dense_layers = m.layers - moe_layers;
  if (dense_layers > 0 && dense_inner <= 0)
    f.fail("intermediate_size", "missing: the dense layers' MLP width is needed to count the weights");
  std::int64_t per_moe = experts * gated(expert_inner) + (shared_inner > 0 ? gated(shared_inner) : 0);
  m.other_params += moe_layers * h * experts;                                             // the router's gate
  if (m.model_type == "qwen2_moe" && shared_inner > 0) m.other_params += moe_layers * h;  // shared_expert_gate
  m.mlp_params = per_moe * moe_layers + gated(std::max<std::int64_t>(0, dense_inner)) * dense_layers;
}

}  // namespace

ModelShape ModelShape::fromConfig(const json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(formatInputError(file, 0, "", "expected a config.json object"));
  ConfigFields f{j, file};
  ModelShape m;
  m.model_type = f.has("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
  m.layers = static_cast<int>(f.count("num_hidden_layers", 1, 10000));
  m.hidden = static_cast<int>(f.count("hidden_size", 1, 1'000'000));
  m.attention_heads = static_cast<int>(f.count("num_attention_heads", 1, 100000));
  m.kv_heads = static_cast<int>(f.countOr("num_key_value_heads", m.attention_heads, 1));
  m.head_dim = static_cast<int>(f.countOr("head_dim", m.hidden / m.attention_heads, 1));
  m.vocab = f.count("vocab_size", 1, 100'000'000);
  m.tied_embeddings = f.flag("tie_word_embeddings", false);
  m.kv_lora_rank = static_cast<int>(f.countOr("kv_lora_rank", 0));
  if (m.kv_lora_rank > 0) m.qk_rope_head_dim = static_cast<int>(f.count("qk_rope_head_dim"));
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (!f.has(key) || !j[key].is_string()) continue;
    const int bytes = dtypeBytes(j[key].get<std::string>());
    if (bytes == 0) f.fail(key, "unknown dtype '" + j[key].get<std::string>() + "' (give the served dtype)");
    m.dtype_bytes = bytes;
    break;
  }
  if (f.has("quantization_config"))
    f.fail("quantization_config",
           "a quantized checkpoint: its weights are not dtype x parameters; give the weights' size instead");

  m.embedding_params = m.vocab * m.hidden * (m.tied_embeddings ? 1 : 2);
  countAttention(f, m);
  countMlp(f, m);
  m.other_params += static_cast<std::int64_t>(m.layers) * 2 * m.hidden + m.hidden;  // two norms a layer, a final one
  return m;
}

ModelShape ModelShape::load(const std::string& path) {
  const std::string text = InputFile::readAll(path, 16u << 20);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(formatInputError(path, 0, "", std::string("invalid JSON: ") + e.what()));
  }
  return fromConfig(j, path);
}

double ModelShape::kvBytesPerToken(int kv_dtype_bytes, int tp) const {
  if (kv_lora_rank > 0) return static_cast<double>(layers) * (kv_lora_rank + qk_rope_head_dim) * kv_dtype_bytes;
  const int heads = std::max(1, kv_heads / std::max(1, tp));
  return static_cast<double>(layers) * heads * head_dim * 2.0 * kv_dtype_bytes;
}

std::string ModelShape::describe() const {
  char buf[200];
  if (kv_lora_rank > 0)
    std::snprintf(buf, sizeof buf, "%s: %d layers, MLA latent %d + rope %d, %.2f B parameters", model_type.c_str(),
                  layers, kv_lora_rank, qk_rope_head_dim, static_cast<double>(parameters()) / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%s: %d layers, %d KV heads x %d, %.2f B parameters", model_type.c_str(), layers,
                  kv_heads, head_dim, static_cast<double>(parameters()) / 1e9);
  return buf;
}

}  // namespace kvscope
