#pragma once
// How a trace reader treats its input. Shared by every reader and by loadTrace().
#include "core/model/Ids.h"

namespace kvscope {

struct TraceOptions {
  // Skip malformed records (one JSONL line, one CSV row, one agentic request) and count them in
  // Workload::skipped_records instead of failing the whole load. Whole-file problems still fail.
  bool lenient = false;
  // Session ids are assigned from here upwards, so several traces can share one id space.
  SessionId first_session_id = 1;
};

}  // namespace kvscope
