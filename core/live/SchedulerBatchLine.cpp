#include "core/live/SchedulerBatchLine.h"

#include <algorithm>

#include "core/live/LogFieldReader.h"

namespace kvscope {

using namespace logtext;

namespace {

// "#running-req: 3, #token: 100, token usage: 0.10, cuda graph: True, gen throughput (token/s): 12.5"
// Keys come from scheduler_metrics_mixin.py (log_prefill_stats / log_decode_stats) and its older
// homes (scheduler.py, tp_worker.py) and pool_stats (the hybrid pools); unknown keys are skipped.
void parseBatch(std::string_view list, LogRecord& r) {
  LogFieldReader f(r);
  BatchGauges& b = r.batch;
  while (!list.empty()) {
    const auto comma = list.find(", ");
    const std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 2);
    const auto colon = item.rfind(": ");
    if (colon == std::string_view::npos) continue;  // newer SGLang adds fields in other shapes
    const std::string_view key = item.substr(0, colon), value = trim(item.substr(colon + 2));
    struct IntField {
      std::string_view key;
      std::int64_t BatchGauges::*field;
    };
    static constexpr IntField kInts[] = {{"#running-req", &BatchGauges::running_req},
                                         {"#queue-req", &BatchGauges::queue_req},
                                         {"#token", &BatchGauges::tokens},
                                         {"#new-seq", &BatchGauges::new_seq},
                                         {"#new-token", &BatchGauges::new_token},
                                         {"#cached-token", &BatchGauges::cached_token},
                                         {"#prealloc-req", &BatchGauges::prealloc_req},
                                         {"#transfer-req", &BatchGauges::transfer_req},
                                         {"#retracted-req", &BatchGauges::retracted_req},
                                         {"#inflight-req", &BatchGauges::inflight_req},
                                         {"#bootstrap-req", &BatchGauges::bootstrap_req},
                                         {"#pending-token", &BatchGauges::pending_token},
                                         {"#full token", &BatchGauges::full_tokens},
                                         {"#swa token", &BatchGauges::swa_tokens},
                                         {"mamba num", &BatchGauges::mamba_num}};
    struct RatioField {
      std::string_view key;
      double BatchGauges::*field;
    };
    static constexpr RatioField kRatios[] = {{"token usage", &BatchGauges::token_usage},
                                             {"pre-allocated usage", &BatchGauges::preallocated_usage},
                                             {"gen throughput (token/s)", &BatchGauges::gen_throughput},
                                             {"input throughput (token/s)", &BatchGauges::input_throughput},
                                             {"full token usage", &BatchGauges::full_usage},
                                             {"swa token usage", &BatchGauges::swa_usage},
                                             {"mamba usage", &BatchGauges::mamba_usage},
                                             {"accept len", &BatchGauges::accept_len}};
    for (const auto& i : kInts) {
      if (key != i.key) continue;
      const auto n = toInt(value);
      if (!n || *n < 0) return f.fail(key, "an integer >= 0", value);
      b.*i.field = *n;
    }
    for (const auto& d : kRatios) {
      if (key != d.key) continue;
      const auto v = toDouble(value);
      if (!v || *v < 0) return f.fail(key, "a number >= 0", value);
      b.*d.field = *v;
    }
    if (key == "cache hit rate") {
      const auto v = toDouble(value.ends_with('%') ? value.substr(0, value.size() - 1) : value);
      if (!v || *v < 0) return f.fail(key, "a percentage", value);
      b.cache_hit_rate = *v / 100.0;
    }
    if (key == "cuda graph" || key == "cpu graph") {
      if (value != "True" && value != "False") return f.fail(key, "True or False", value);
      b.cuda_graph = value == "True";
    }
  }
  // A hybrid model's line has per-pool numbers only: the worker's figure is upstream's.
  if (b.tokens < 0 && b.full_tokens >= 0) b.tokens = std::max(b.full_tokens, b.swa_tokens);
  if (b.token_usage < 0 && b.full_usage >= 0) b.token_usage = std::max(b.full_usage, b.swa_usage);
  if (r.kind == LogLineKind::DecodeBatch && b.running_req < 0) f.fail("#running-req", "the field", "nothing");
  if (r.kind == LogLineKind::PrefillBatch && b.new_seq < 0) f.fail("#new-seq", "the field", "nothing");
}

}  // namespace

// What follows "Decode batch" / "Prefill batch": ". ", ", ", " [N], " (SGLANG_LOG_FORWARD_ITERS)
// or "(mixed #running-req: N). " (older mixed chunked prefill).
void SchedulerBatchLine::parse(std::string_view msg, LogRecord& r) {
  r.kind = msg.front() == 'D' ? LogLineKind::DecodeBatch : LogLineKind::PrefillBatch;
  msg.remove_prefix(msg.find("batch") + 5);
  if (msg.starts_with("(mixed #running-req: ")) {
    const auto close = msg.find(')');
    if (const auto n = toInt(msg.substr(21, close == std::string_view::npos ? 0 : close - 21)))
      r.batch.mixed_running_req = *n;
    if (close != std::string_view::npos) msg.remove_prefix(close + 1);
  } else if (msg.starts_with(" [")) {
    const auto close = msg.find(']');
    if (const auto n = toInt(msg.substr(2, close == std::string_view::npos ? 0 : close - 2))) r.batch.iteration = *n;
    if (close != std::string_view::npos) msg.remove_prefix(close + 1);
  }
  while (!msg.empty() && (msg.front() == ',' || msg.front() == '.' || msg.front() == ' ')) msg.remove_prefix(1);
  parseBatch(msg, r);
}

}  // namespace kvscope
