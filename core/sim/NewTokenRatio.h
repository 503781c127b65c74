#pragma once
// SGLang's guess of how much of a request's remaining output it will still generate, and the
// other constants of its decode-memory path, as upstream (sgl-project/sglang) runs them:
//  - managers/scheduler.py (read as excerpts of several stored versions, the same in all): init =
//  min(SGLANG_INIT_NEW_TOKEN_RATIO *
//    --schedule-conservativeness, 1), min = init * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, decay =
//    (init - min) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS; update_running_batch decays the ratio by
//    one step on every decode batch that fit, and replaces it by retract_decode's estimate after a
//    "Decode out of memory happened" retraction.
//  - python/sglang/global_config.py (stored commit 025ea29a3849): the defaults 0.7, 0.14, 600 and
//    retract_decode_steps = 20.
//  - managers/schedule_batch.py retract_decode (stored commit 000eaffacf04): the estimate after a
//    retraction, min(1, (decoded tokens of the kept requests + 20 * kept) / their max_new_tokens).
//  - managers/schedule_policy.py PrefillAdder (stored commit 00550cd11b35): admission counts
//    `min(max_new_tokens - generated, CLIP_MAX_NEW_TOKENS) * new_token_ratio` of every running
//    request as taken, and a new request's own clipped max_new_tokens in full.
//  - disaggregation/decode.py (stored commit 0035ca42c2d6): a PD decode worker preallocates a
//    transfer only with SGLANG_NUM_RESERVED_DECODE_TOKENS (512) spare per active request, and not
//    at all while retracted requests wait to be resumed.
#include <algorithm>
#include <cstdint>

namespace kvscope {

struct NewTokenRatio {
  static constexpr double kInit = 0.7;                        // SGLANG_INIT_NEW_TOKEN_RATIO x conservativeness 1.0
  static constexpr double kMinFactor = 0.14;                  // SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
  static constexpr double kDecaySteps = 600;                  // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
  static constexpr std::int64_t kRetractDecodeSteps = 20;     // global_config.retract_decode_steps
  static constexpr std::int64_t kClipMaxNewTokens = 4096;     // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
  static constexpr std::int64_t kReservedDecodeTokens = 512;  // SGLANG_NUM_RESERVED_DECODE_TOKENS

  static constexpr double minimum() { return kInit * kMinFactor; }

  double value = kInit;

  // A decode batch found room for its next token.
  void decay() { value = std::max(value - (kInit - minimum()) / kDecaySteps, minimum()); }
  // After a retraction: the kept requests' decoded tokens and max_new_tokens, summed.
  void afterRetraction(std::int64_t decoded, std::int64_t kept, std::int64_t max_new) {
    value =
        max_new > 0
            ? std::min(1.0, static_cast<double>(decoded + kRetractDecodeSteps * kept) / static_cast<double>(max_new))
            : 1.0;
  }
  // What an admission must leave for a request that still has `remaining` tokens to generate.
  double reserveFor(std::int64_t remaining) const {
    return static_cast<double>(std::min(std::max<std::int64_t>(remaining, 0), kClipMaxNewTokens)) * value;
  }
};

}  // namespace kvscope
