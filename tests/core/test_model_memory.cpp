// A model's KV bytes per token and weights from its config.json (ModelShape), and the pool an
// engine leaves for them (ModelMemory). The expected numbers are worked by hand from the configs in
// tests/data/fixtures/models and the published sizes (Meta: 8.03 B parameters; Qwen: 30.5 B total),
// not taken from KVScope's output.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "core/calibration/ModelMemory.h"
#include "core/calibration/ModelShape.h"
#include "core/model/Error.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

class TestModelMemory : public QObject {
  Q_OBJECT
 private slots:
  // Llama-3-8B: 32 layers x 8 KV heads x 128 x 2 x 2 bytes = 131,072 bytes a token, the h200
  // profile's own figure. Parameters: embeddings 2 x 128,256 x 4,096 = 1,050,673,152; a layer's
  // attention 2 x 4,096^2 + 2 x 4,096 x 1,024 = 41,943,040 and MLP 3 x 4,096 x 14,336 = 176,160,768;
  // norms 2 x 4,096 a layer + 4,096: 8,030,261,248 in all (Meta's "8.03 B").
  void denseLlama() {
    const ModelShape m = ModelShape::load(test::testDataPath("fixtures/models/meta-llama-3-8b.config.json"));
    QCOMPARE(m.kvBytesPerToken(2), 131072.0);
    QCOMPARE(m.parameters(), std::int64_t{8030261248});
    QCOMPARE(m.dtype_bytes, 2);
    QCOMPARE(m.kvBytesPerToken(1), 65536.0);     // an fp8 KV cache
    QCOMPARE(m.kvBytesPerToken(2, 2), 65536.0);  // TP 2: half the KV heads a GPU
  }

  // Qwen3-Coder-30B-A3B: 48 x 4 x 128 x 2 x 2 = 98,304 bytes (96 KiB) a token, as the lab's own
  // page says. Parameters: embeddings 2 x 151,936 x 2,048 = 622,329,856; a layer's attention
  // 2,048 x 4,096 x 2 + 2 x 2,048 x 512 + 2 x 128 (q/k norms) = 18,874,624; its 128 experts
  // 128 x 3 x 2,048 x 768 = 603,979,776 and router 2,048 x 128 = 262,144; norms 2 x 2,048 a layer +
  // 2,048: 30,532,122,624 in all (Qwen's "30.5 B"), 61.06 GB of bf16.
  void mixtureOfExperts() {
    const ModelShape m =
        ModelShape::load(test::testDataPath("fixtures/models/qwen3-coder-30b-a3b-instruct.config.json"));
    QCOMPARE(m.model_type, std::string("qwen3_moe"));
    QCOMPARE(m.kvBytesPerToken(2), 98304.0);
    QCOMPARE(m.attention_params, std::int64_t{48} * 18874624);
    QCOMPARE(m.mlp_params, std::int64_t{48} * 603979776);
    QCOMPARE(m.parameters(), std::int64_t{30532122624});
    QVERIFY(std::fabs(m.weightBytes() - 61.064e9) < 0.01e9);
  }

  // SGLang's rule on an H200 (143,771 MiB): mem_fraction_static x (memory - context) - weights.
  // 0.8 x (140.40 - 0.5) GiB - 56.86 GiB = 55.06 GiB; / 98,304 bytes = 601,4xx tokens.
  void sglangPoolOnH200() {
    const ModelShape m =
        ModelShape::load(test::testDataPath("fixtures/models/qwen3-coder-30b-a3b-instruct.config.json"));
    MemoryBudget b;
    b.gpu_bytes = gpuMemoryMib("h200") * 1024 * 1024;
    b.context_bytes = 0.5 * kGiB;
    b.fraction = 0.8;
    const MemoryBudget::Pool p = b.pool(m);
    const double expect_bytes = 0.8 * (143771.0 / 1024 - 0.5) * kGiB - 30532122624.0 * 2;
    QCOMPARE(p.tokens, static_cast<long>(std::floor(expect_bytes / 98304)));
    QVERIFY2(p.tokens > 590000 && p.tokens < 610000, qPrintable(QString::number(p.tokens)));
    QVERIFY(p.formula.find("mem_fraction_static 0.80") != std::string::npos);
    b.fraction = 0.7;  // the prefill workers': 0.1 x 139.9 GiB less
    QVERIFY(b.pool(m).tokens < p.tokens - 140000);
    // vLLM's rule subtracts what its profiling run reserves, and the context, from the whole GPU.
    b.engine = ServingEngine::Vllm;
    b.fraction = 0.9;
    b.gpu_bytes = gpuMemoryMib("h20") * 1024 * 1024;
    b.reserved_bytes = 4 * kGiB;
    const MemoryBudget::Pool v = b.pool(m);
    QCOMPARE(v.kv_bytes, 0.9 * 97871.0 / 1024 * kGiB - 30532122624.0 * 2 - 4 * kGiB - 0.5 * kGiB);
    // Weights larger than the budget leave nothing, not a negative pool.
    b.fraction = 0.5;
    QCOMPARE(b.pool(m).tokens, 0L);
  }

  // DeepSeek's latent attention caches the latent and the rope key: layers x (512 + 64) x 2 bytes.
  void latentAttention() {
    const nlohmann::json j = {{"model_type", "deepseek_v3"},   {"num_hidden_layers", 61},
                              {"hidden_size", 7168},           {"num_attention_heads", 128},
                              {"num_key_value_heads", 128},    {"vocab_size", 129280},
                              {"kv_lora_rank", 512},           {"qk_rope_head_dim", 64},
                              {"qk_nope_head_dim", 128},       {"v_head_dim", 128},
                              {"q_lora_rank", 1536},           {"n_routed_experts", 256},
                              {"moe_intermediate_size", 2048}, {"n_shared_experts", 1},
                              {"first_k_dense_replace", 3},    {"intermediate_size", 18432},
                              {"torch_dtype", "bfloat16"}};
    const ModelShape m = ModelShape::fromConfig(j, "deepseek.json");
    QCOMPARE(m.kvBytesPerToken(2), 61.0 * 576 * 2);
    // DeepSeek-V3's report: 671 B in the main model (its 14 B next-token module apart).
    QVERIFY2(m.parameters() > 665e9 && m.parameters() < 677e9, qPrintable(QString::number(m.parameters())));
  }

  // A config that cannot give a shape names its file and field.
  void errorsNameTheField() {
    auto message = [](const nlohmann::json& j) -> QString {
      try {
        ModelShape::fromConfig(j, "cfg.json");
      } catch (const InputError& e) {
        return e.what();
      }
      return {};
    };
    nlohmann::json j = {{"num_hidden_layers", 2}, {"hidden_size", 64}, {"vocab_size", 100}};
    QVERIFY2(message(j).contains("cfg.json") && message(j).contains("num_attention_heads"), qPrintable(message(j)));
    j["num_attention_heads"] = "eight";
    QVERIFY2(message(j).contains("whole number"), qPrintable(message(j)));
    j["num_attention_heads"] = 4;
    QVERIFY2(message(j).contains("intermediate_size"), qPrintable(message(j)));  // no MLP width
    j["intermediate_size"] = 128;
    j["quantization_config"] = {{"quant_method", "fp8"}};
    QVERIFY2(message(j).contains("quantized"), qPrintable(message(j)));
    j.erase("quantization_config");
    j["torch_dtype"] = "int3";
    QVERIFY2(message(j).contains("unknown dtype"), qPrintable(message(j)));
    j["torch_dtype"] = "float16";
    QVERIFY(message(j).isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestModelMemory)
#include "test_model_memory.moc"
