#pragma once
// One entry point for every supported trace, chosen by what the path is.
#include <string>

#include "core/model/Workload.h"
#include "core/trace/TraceOptions.h"

namespace kvscope {

// A directory: every *.json in it, by name, as agentic sessions. A file: .jsonl (Mooncake),
// .csv (Azure) or .json (agentic). Sessions come back sorted by (start_s, id).
// Throws InputError for anything else, a missing path or malformed input.
Workload loadTrace(const std::string& path, const TraceOptions& options);

}  // namespace kvscope
