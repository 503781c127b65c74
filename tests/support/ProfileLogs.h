#pragma once
// Scheduler logs of a worker whose speed is known, for the `calibrate profile` tests: lines in
// SGLang's own format, as python/sglang/srt/managers/scheduler_metrics_mixin.py (sgl-project/sglang
// at 01bb3c807f7e62c19a31de7548837505488c2b64) prints them - `Decode batch, ...` of a decode worker
// of disaggregation (pre-allocated usage, #prealloc-req, #transfer-req, #retracted-req), `Prefill
// batch, ...` of a prefill worker (#prealloc-req, #inflight-req, input throughput) or of a unified one
// (no input throughput) - each ending with ", " as upstream's f-strings do, behind the prefix
// `[%(asctime)s.%(msecs)03d TP0] ` (SGLANG_LOG_MS, python/sglang/srt/utils/common.py).
//
// The numbers follow upstream's meaning: gen throughput = tokens generated since the previous decode
// log / the time since it (decode_log_interval = 40 iterations of #running-req tokens each); input
// throughput = the PREVIOUS prefill batch's #new-token / the time between the two prefill logs (the
// first line prints 0.00). Times get multiplicative noise N(1, noise) from a fixed seed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace kvscope::test {

struct TrueProfile {
  double base_s = 0.012;
  double per_request_s = 0.00035;
  double per_token_s = 4.1e-8;
  double prefill_tokens_per_s = 21000;
  double prefill_overhead_s = 0.03;
};

struct ProfileLogOptions {
  int decode_lines = 1500;
  int prefill_lines = 1500;
  double noise = 0.05;
  std::uint64_t seed = 15;
  int fixed_running = 0;           // > 0: every decode line has this many running requests
  bool prefill_throughput = true;  // false: a unified worker's prefill lines (no input throughput)
  bool millis = true;              // false: whole-second times (SGLANG_LOG_MS unset, upstream's default)
  double queued_share = 0.9;       // prefill batches that leave requests queued (the next follows at once)
  long kv_pool_tokens = 850000;
};

inline std::string logTime(double t_s, bool millis = true) {
  // 2026-08-20 09:00:00 + t_s, with milliseconds, or truncated to the second as asctime is.
  const auto ms = static_cast<std::int64_t>(std::floor(t_s * 1000));
  const std::int64_t s = 9 * 3600 + ms / 1000;
  char buf[64];
  std::snprintf(buf, sizeof buf, "2026-08-20 %02lld:%02lld:%02lld.%03lld", static_cast<long long>(s / 3600 % 24),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60), static_cast<long long>(ms % 1000));
  std::string text = buf;
  if (!millis) text.resize(text.size() - 4);
  return text;
}

// A decode worker's log: Decode batch lines over a spread of batch sizes (1..256, log-uniform) and
// context lengths (200..6000 tokens per request, log-uniform, within the KV pool).
inline std::vector<std::string> decodeLog(const TrueProfile& p, const ProfileLogOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(1.0, o.noise);
  std::vector<std::string> out;
  double t = 0;
  char buf[512];
  for (int i = 0; i < o.decode_lines; ++i) {
    const long running = o.fixed_running > 0 ? o.fixed_running : std::lround(std::exp(u(rng) * std::log(256.0)));
    const double per_req_ctx = std::exp(std::log(200.0) + u(rng) * std::log(6000.0 / 200.0));
    const long tokens = std::min(o.kv_pool_tokens, std::lround(static_cast<double>(running) * per_req_ctx));
    const double iteration =
        (p.base_s + p.per_request_s * static_cast<double>(running) + p.per_token_s * static_cast<double>(tokens)) *
        std::max(0.5, noise(rng));
    const double interval = 40 * iteration;
    t += interval;
    const double gen = 40.0 * static_cast<double>(running) / interval;
    std::snprintf(
        buf, sizeof buf,
        "[%s TP0] Decode batch, #running-req: %ld, #token: %ld, token usage: %.2f, pre-allocated usage: 0.00, "
        "#prealloc-req: 0, #transfer-req: %d, #retracted-req: 0, cuda graph: True, gen throughput (token/s): %.2f, "
        "#queue-req: 0, ",
        logTime(t).c_str(), running, tokens, static_cast<double>(tokens) / static_cast<double>(o.kv_pool_tokens),
        static_cast<int>(u(rng) * 3), gen);
    out.emplace_back(buf);
  }
  return out;
}

// A prefill worker's log: batches of 256..16384 new tokens (log-uniform); `queued_share` of them (nine
// in ten) leave requests queued (#queue-req > 0, the next batch follows at once), the rest are
// followed by 0-2 s idle.
inline std::vector<std::string> prefillLog(const TrueProfile& p, const ProfileLogOptions& o) {
  std::mt19937_64 rng(o.seed + 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(1.0, o.noise);
  std::vector<std::string> out;
  double t = 0;
  long prev_tokens = 0;
  int prev_queue = 0;
  char buf[512];
  for (int i = 0; i < o.prefill_lines; ++i) {
    const long tokens = std::lround(std::exp(std::log(256.0) + u(rng) * std::log(16384.0 / 256.0)));
    const long cached = std::lround(u(rng) * 20000);
    const int queue = u(rng) < o.queued_share ? 1 + static_cast<int>(u(rng) * 8) : 0;
    double gap = 0;
    if (i > 0) {
      gap = (p.prefill_overhead_s + static_cast<double>(prev_tokens) / p.prefill_tokens_per_s) *
            std::max(0.5, noise(rng));
      if (prev_queue == 0) gap += 2 * u(rng);
      t += gap;
    }
    const double throughput = i > 0 ? static_cast<double>(prev_tokens) / gap : 0.0;
    int n = std::snprintf(
        buf, sizeof buf,
        "[%s TP0] Prefill batch, #new-seq: %d, #new-token: %ld, #cached-token: %ld, token usage: %.2f, "
        "#running-req: 0, #queue-req: %d, ",
        logTime(t, o.millis).c_str(), 1 + static_cast<int>(u(rng) * 4), tokens, cached, u(rng) * 0.5, queue);
    if (o.prefill_throughput)
      std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n),
                    "#prealloc-req: %d, #inflight-req: %d, input throughput (token/s): %.2f, ",
                    static_cast<int>(u(rng) * 4), static_cast<int>(u(rng) * 4), throughput);
    out.emplace_back(buf);
    prev_tokens = tokens;
    prev_queue = queue;
  }
  return out;
}

}  // namespace kvscope::test
