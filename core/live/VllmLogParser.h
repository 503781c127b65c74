#pragma once
// One line of a vLLM server's log, classified into the same LogRecord SGLang's lines give, so one
// LogEventMapper maps both. vLLM's line (vllm/logger.py, vllm/utils/system_utils.py; the commits are
// in tests/data/upstream_logs/README.md): an optional process prefix `(NAME pid=N) ` (ANSI-coloured
// on a terminal), then `LEVEL MM-DD HH:MM:SS [file.py:N] message` (older: `file.py:N] ` without the
// bracket; with VLLM_LOGGING_LEVEL=DEBUG a shortened path). A record with newlines is several
// lines, each with the full header, all but the last ending in '\r'; SchedulerLogReader joins them.
//
// Understood: the periodic stats line of every version (`Engine 000: ...`, `N Engines Aggregated:
// ...`, V0's), the KV cache size at start-up, EngineCore's fatal error (with its traceback) and the
// death of an engine or worker process, the Mooncake connector's transfer, handshake, bootstrap
// and timeout failures (one line per TP rank: LogEventMapper counts a request once), and aborts.
#include <optional>
#include <string_view>

#include "core/live/SchedulerLogParser.h"

namespace kvscope {

class VllmLogParser {
 public:
  // The line's record when it has vLLM's header or process prefix, else nullopt (not vLLM's: the
  // caller tries other formats). Never throws; a vLLM line of no known message is Unknown, a known
  // one with a bad field Malformed.
  static std::optional<LogRecord> parse(std::string_view line);
};

}  // namespace kvscope
