#pragma once
// SGLang's batch lines: "Decode batch, #running-req: N, #token: T, token usage: U, ..." and
// "Prefill batch. #new-seq: N, #new-token: T, ...", read into LogRecord::batch (BatchGauges). Keys
// come from scheduler_metrics_mixin.py and its older homes; unknown keys are skipped, a known key
// with a bad value makes the record Malformed.
#include <string_view>

#include "core/live/SchedulerLogParser.h"

namespace kvscope {

class SchedulerBatchLine {
 public:
  // `msg` starts with "Decode batch" or "Prefill batch" (after the prefix); sets r.kind to
  // DecodeBatch or PrefillBatch (or Malformed) and r.batch.
  static void parse(std::string_view msg, LogRecord& r);
};

}  // namespace kvscope
