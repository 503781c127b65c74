#pragma once
// The prefix SGLang's logger puts before a scheduler's message (SchedulerLogParser.h has the shapes):
// `[YYYY-MM-DD HH:MM:SS(.mmm) DPn TPn ...] `, `[TP0] ` (no asctime), or 2024's `[gpu_id=N] `.
#include <string_view>

#include "core/live/SchedulerLogParser.h"

namespace kvscope {

class SchedulerLogPrefix {
 public:
  // The prefix alone; `rest` gets the text after it. False (and `prefix` untouched) when the line
  // has none.
  static bool parse(std::string_view line, LogPrefix& prefix, std::string_view& rest);
};

}  // namespace kvscope
