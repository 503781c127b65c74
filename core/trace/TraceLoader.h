#pragma once
// One entry point for every supported trace, chosen by what the path is.
#include <functional>
#include <string>

#include "core/model/Workload.h"
#include "core/trace/TraceOptions.h"

namespace kvscope {

// A directory: every *.json in it, by name, as agentic sessions. A file: .jsonl (Mooncake),
// .csv (Azure) or .json (agentic). Sessions come back sorted by (start_s, id).
// Throws InputError for anything else, a missing path or malformed input.
Workload loadTrace(const std::string& path, const TraceOptions& options);

// A file format a layer above core reads (a .kvrec recording: backend/recording/RecordingWorkload),
// by its extension (".kvrec"); `what` names it in errors. Registered once at a program's start.
using TraceReader = std::function<Workload(const std::string& path, const TraceOptions& options)>;
void registerTraceReader(const std::string& extension, const std::string& what, TraceReader reader);

}  // namespace kvscope
