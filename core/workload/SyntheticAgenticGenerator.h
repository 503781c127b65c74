#pragma once
// Agentic coding sessions without a trace file: every session opens with the same boilerplate
// (system prompt + tool schema, one global block chain), then grows turn by turn by the previous
// output and some new tokens, with think time between turns. Defaults follow the lab's workload
// (ARCHITECTURE.md D1) and distributions measured over 164 of kv-cache-tester's real sessions
// (the repository is named in tests/data/README.md; 13 of those sessions are vendored there).
#include <cstdint>

#include "core/model/Distribution.h"
#include "core/model/Workload.h"

namespace kvscope {

struct SyntheticAgenticSpec {
  int sessions = 50;
  double start_window_s = 300;  // sessions start spread over this window
  // How starts fill the window: evenly spread (one per slot, jittered inside it), or Poisson
  // arrivals (independent uniform starts), as a production trace's sessions arrive.
  enum class Arrivals { Spread, Poisson } arrivals = Arrivals::Spread;
  Distribution boilerplate_tokens = Distribution::fixed(12000);
  Distribution first_turn_tokens = Distribution::fixed(4000);  // user part of turn 1 after boilerplate
  Distribution turns = Distribution::fixed(12);
  // Sessions of one request (most of a production agentic trace: the lab's GLM-5.1 window has 90%);
  // the others draw their turn count from `turns`.
  double single_turn_share = 0;
  // Distinct boilerplates (system prompt + tools) the sessions use, each session one of them at
  // random: 1 is every session on the same prefix; more split the cross-session reuse.
  int boilerplate_variants = 1;
  Distribution new_tokens = Distribution::fixed(3000);
  Distribution output_tokens = Distribution::fixed(500);
  Distribution think_s = Distribution::fixed(10);
  double zero_think_probability = 0.0;       // tool calls that return at once (think time under 1 s)
  std::int64_t max_context_tokens = 200000;  // a session ends before its prompt would exceed this
};

// How long a turn took on the cluster a trace was recorded on, so that a synthetic session's trace
// times are what a recording's are: turn k at turn k-1's start + its service time + the think time
// (the lab's traces time a turn at request_ready, after the previous response ended). The tracets
// dispatch fires turn k at max(previous finished, that time), so without it every synthetic turn
// would fire the moment the previous one ends. The service time is the turn alone on its worker:
// its uncached prompt prefilled, then its output decoded one token an iteration.
struct RecordedService {
  double prefill_tokens_per_s = 0;  // 0: no service time (offsets are think times alone)
  double prefill_overhead_s = 0;
  double prefill_per_context_token_s = 0;
  double decode_iteration_base_s = 0;
  double decode_iteration_per_request_s = 0;
  double decode_iteration_per_context_token_s = 0;
  // A turn with `uncached` new prompt tokens after `cached` ones, and `output` tokens to generate.
  double seconds(std::int64_t cached, std::int64_t uncached, std::int64_t output) const;
};

class SyntheticAgenticGenerator {
 public:
  static Workload generate(const SyntheticAgenticSpec& spec, std::uint64_t seed, SessionId first_id = 1,
                           const RecordedService& service = {});
};

}  // namespace kvscope
