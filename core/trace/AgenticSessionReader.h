#pragma once
// Reads one kv-cache-tester agentic session (a JSON file): `block_size`, `system_tokens`,
// `tool_tokens` and `requests`, where a `type: "subagent"` entry nests its own requests.
#include <string>

#include "core/model/Ids.h"
#include "core/model/Workload.h"
#include "core/trace/TraceOptions.h"

namespace kvscope {

class AgenticSessionReader {
 public:
  // Appends the file's session and one session per sub-agent (nested ones too) to `into`, taking ids
  // from `next_id`. On InputError neither `into` nor `next_id` is changed. Field paths in errors look
  // like `requests[5].requests[2].in`.
  static void read(const std::string& path, const TraceOptions& options, SessionId& next_id, Workload& into);
};

}  // namespace kvscope
