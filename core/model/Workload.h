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
  // A recorded run's traffic (backend/recording/RecordingWorkload): its start and trace times are
  // the run's own, already scaled and spread (no start window, time scale 1 unless asked), it names
  // the dispatch it ran under, and what it offered (turns it never reached included) and over which
  // window, for the metrics that divide by them. Unset (false, "", -1) for a trace or a generator.
  bool times_final = false;
  std::string dispatch;
  std::int64_t offered_requests = -1;
  double trace_window_s = -1;
  // What the twin had to model to run it (e.g. "prefix chains from cached tokens"), for the report.
  std::vector<std::string> modelled;
  std::size_t turnCount() const {
    std::size_t n = 0;
    for (const auto& s : sessions) n += s.turns.size();
    return n;
  }
};

}  // namespace kvscope
