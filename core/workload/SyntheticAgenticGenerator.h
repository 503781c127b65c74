#pragma once
// Agentic coding sessions without a trace file: every session opens with the same boilerplate
// (system prompt + tool schema, one global block chain), then grows turn by turn by the previous
// output and some new tokens, with think time between turns. Defaults follow the lab's workload
// (ARCHITECTURE.md D1) and distributions measured over 164 of kv-cache-tester's real sessions
// (the repository is named in tests/data/README.md; 13 of those sessions are vendored there).
#include <cstdint>

#include "core/model/Workload.h"
#include "core/model/Distribution.h"

namespace kvscope {

struct SyntheticAgenticSpec {
  int sessions = 50;
  double start_window_s = 300;           // sessions start spread over this window
  Distribution boilerplate_tokens = Distribution::fixed(12000);
  Distribution first_turn_tokens = Distribution::fixed(4000);  // user part of turn 1 after boilerplate
  Distribution turns = Distribution::fixed(12);
  Distribution new_tokens = Distribution::fixed(3000);
  Distribution output_tokens = Distribution::fixed(500);
  Distribution think_s = Distribution::fixed(10);
  double zero_think_probability = 0.0;   // tool calls that return at once (think time under 1 s)
  std::int64_t max_context_tokens = 200000;  // a session ends before its prompt would exceed this
};

class SyntheticAgenticGenerator {
 public:
  static Workload generate(const SyntheticAgenticSpec& spec, std::uint64_t seed, SessionId first_id = 1);
};

}  // namespace kvscope
