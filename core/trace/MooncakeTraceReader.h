#pragma once
// Reads a Mooncake FAST'25 trace: JSONL, one request per line with `timestamp` (ms), `input_length`,
// `output_length` and `hash_ids` (512-token prefix blocks whose ids are global across the trace).
#include <string>

#include "core/model/Workload.h"
#include "core/trace/TraceOptions.h"

namespace kvscope {

class MooncakeTraceReader {
 public:
  // Every line becomes a one-turn session. Throws InputError (file:line, field, expected vs found).
  static Workload read(const std::string& path, const TraceOptions& options);
};

}  // namespace kvscope
