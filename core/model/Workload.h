#pragma once
// A workload is a set of sessions, each a list of turns. Readers and the synthetic generator produce
// it; the simulator replays it open loop (at the turns' own times) or closed loop (think time after
// the previous turn finished).
#include <cstddef>
#include <string>
#include <vector>

#include "core/model/Ids.h"
#include "core/model/Prompt.h"

namespace kvscope {

struct Turn {
  double offset_s = 0;  // open loop: arrival time relative to the session's start (trace `t`)
  double think_s = 0;   // closed loop: pause after the previous turn finished (trace `think_time`)
  std::int32_t output_tokens = 0;
  PromptLayout prompt;
};

struct Session {
  SessionId id = 0;
  double start_s = 0;  // arrival of the first turn (before any replay scaling)
  std::string source;  // file (and sub-agent) it came from, for error messages and the UI
  std::vector<Turn> turns;
};

struct Workload {
  std::vector<Session> sessions;
  std::size_t skipped_records = 0;  // malformed records skipped in lenient mode
  std::size_t turnCount() const {
    std::size_t n = 0;
    for (const auto& s : sessions) n += s.turns.size();
    return n;
  }
};

}  // namespace kvscope
