#pragma once
// SGLang's per-request log line (`--log-requests`): the tokenizer manager's `Finish: obj=..., out=...`
// once a request is done, read into a LogRecord of kind RequestFinished: its rid, the session it names,
// prompt, completion and cached tokens, end-to-end latency and (with --enable-metrics) TTFT. Formats
// from python/sglang/srt/utils/request_logger.py (RequestLogger.log_finished_request) and
// managers/tokenizer_manager.py (meta_info), SGLang v0.5.10:
//   text: `Finish: obj=GenerateReqInput(rid='...', ...), out={..., 'meta_info': {'id': ...}}`, a Python
//         repr with no prefix of its own in 0.5.10 (older builds: `[YYYY-MM-DD HH:MM:SS] ` before it);
//   json: `{"timestamp": "2026-05-20T08:02:44.565321", "event": "request.finished", "rid": ..., "obj":
//         {...}, "out": {"meta_info": {...}}}` (--log-requests-format json).
// meta_info is the last key of `out`, so the text form's keys are read after its last `'meta_info': {`,
// where no prompt text can stand. There is no TTFT key: it is e2e - (completion - 1) / decode_throughput
// when the line has decode_throughput (--enable-metrics), else unknown.
#include <string_view>

#include "core/live/SchedulerLogParser.h"

namespace kvscope {

class SglangRequestLog {
 public:
  // `message` is the line after any prefix. True when it is a request line (then r.kind is
  // RequestFinished, or Malformed naming the missing field); false leaves r as it was.
  static bool parseText(std::string_view message, LogRecord& r);
  // A whole line of the JSON format; its timestamp becomes r.prefix. Same contract.
  static bool parseJson(std::string_view line, LogRecord& r);
};

}  // namespace kvscope
