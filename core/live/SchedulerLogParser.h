#pragma once
// One line of an SGLang scheduler / Mooncake / lab-router log, classified. Pure syntax: which P/D
// pair or worker a line concerns is decided by LogEventMapper, which knows whose file the line came
// from. SGLang's prefix is `[%(asctime)s{maybe_ms}{prefix}] ` (python/sglang/srt/utils/common.py
// configure_logger), the asctime `YYYY-MM-DD HH:MM:SS`, `.mmm` with SGLANG_LOG_MS, and prefix the
// scheduler's rank tags in upstream's order ` DPn PPn ATTN_CPn MOE_DPn TPn EPn` (a bare CPn is
// accepted too); a custom logging config may drop the time (`[TP0] `) or the whole prefix; 2024's
// tp_worker.py wrote `[gpu_id=N] `. Never throws; an unknown line is just Unknown, and a line that
// starts like a known format but has a bad field is Malformed with the field named.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope {

enum class LogLineKind : std::uint8_t {
  Unknown,              // a prefixed line of no known format
  Continuation,         // no prefix: a traceback line or the rest of a multi-line message
  Malformed,            // looks like a known format, but a field is wrong (see `problem`)
  Correction,           // Correcting streaming-session extend_input_len from A to B (...)
  SchedulerException,   // Scheduler hit an exception: ...
  Sigquit,              // Received sigquit from a child process. ...
  TransferFailed,       // Prefill|Decode transfer failed for request rank=... with exception ...
  KvPollTimeout,        // Request R timed out after S s in KVPoll.State
  Aborted,              // ... Aborted by AbortReq.
  LostConnection,       // Lost connection with prefill instance (bootstrap_addr: A), N requests affected
  RecoveredViaProbe,    // Session S recovered via probe; un-blacklisted
  SessionFailed,        // Session H:P failed.  (mooncake/conn.py; any case)
  Reconnecting,         // Attempting to reconnect to H:P...  (decode heartbeat, common/conn.py)
  TimeoutHint,          // Some requests timed out when bootstrapping / fail to receive ... (warning_once)
  BootstrapError,       // a prefill's bootstrap server could not be queried or registered with
  MooncakeGlog,         // a Mooncake transfer-engine glog line in the same stream (the worker's stderr):
                        // not the scheduler's; a consumer hands `message` (the whole line) to MooncakeLogMapper
  DecodeBatch,          // Decode batch, #running-req: N, ...
  PrefillBatch,         // Prefill batch. #new-seq: N, ...
  ClientGenerateError,  // RuntimeError: generate stream ended before producing any token
  DecodeOutOfMemory,    // Decode out of memory happened. #retracted_reqs: N, #new_token_ratio: a -> b
  // vLLM (VllmLogParser): the periodic stats line (`Engine 000: Avg prompt throughput: ...`), and
  // the KV cache size it reports at start-up (`GPU KV cache size: N tokens`).
  EngineStats,
  KvCacheSize,
  RequestFinished,  // SGLang --log-requests: `Finish: obj=..., out=...` (SglangRequestLog)
};
const char* toString(LogLineKind);

struct LogPrefix {
  bool present = false;
  bool has_time = false;                   // false for `[TP0] ` (a logging config without asctime)
  std::string timestamp;                   // "2025-06-01 12:00:03" as written (no milliseconds)
  std::int64_t clock_s = 0;                // that time as seconds since 1970 (the log's own clock, zone unknown)
  int millis = -1;                         // SGLANG_LOG_MS=1: the `.mmm`; -1 when absent
  int tp = -1, dp = -1, pp = -1, ep = -1;  // -1: not in the prefix
  int cp = -1, attn_cp = -1, moe_dp = -1;  // CPn, ATTN_CPn, MOE_DPn
  int gpu = -1;                            // 2024's "[gpu_id=N] " (tp_worker.py), no asctime
  // vLLM: `(APIServer pid=1203) ` before `LEVEL MM-DD HH:MM:SS [file.py:N] `. Its time has no year
  // (clock_s is in 1970, as a glog time; the importer moves it into the run's year).
  bool has_year = true;
  std::string process;  // "APIServer", "EngineCore_DP0", "VllmWorker TP1", "" when none
  std::string level;    // "INFO", "ERROR", ...
  // The line ends in '\r': vLLM writes a record with newlines as several lines, each with the
  // header again, all but the last ending in '\r' (NewLineFormatter). The next line of the same
  // process continues this record.
  bool continues = false;
};

// Batch-line gauges; -1 when the line did not carry the field. Hybrid models print one pair per KV
// pool (`#full token`, `full token usage`, `#swa token`, `swa token usage`, `mamba num`, `mamba
// usage`); `tokens` and `token_usage` then hold what upstream's metrics report for the worker
// (scheduler_metrics_mixin.py: the max over full and SWA pools; the full pool with mamba).
struct BatchGauges {
  std::int64_t running_req = -1, queue_req = -1, tokens = -1;
  std::int64_t new_seq = -1, new_token = -1, cached_token = -1;
  std::int64_t prealloc_req = -1, transfer_req = -1, retracted_req = -1, inflight_req = -1;
  std::int64_t bootstrap_req = -1, pending_token = -1, mixed_running_req = -1;
  std::int64_t iteration = -1;  // `Decode batch [N], ` with SGLANG_LOG_FORWARD_ITERS
  std::int64_t full_tokens = -1, swa_tokens = -1, mamba_num = -1;
  double full_usage = -1, swa_usage = -1, mamba_usage = -1;
  double token_usage = -1, preallocated_usage = -1, gen_throughput = -1, input_throughput = -1;
  double cache_hit_rate =
      -1;  // older prefill lines: `cache hit rate: 12.34%`; vLLM's `Prefix cache hit rate` (fractions)
  double external_hit_rate = -1;      // vLLM: `External prefix cache hit rate` (a KV connector's), a fraction
  std::int64_t preemptions = -1;      // vLLM: `Preemptions: N` in the interval (absent when 0)
  std::int64_t capacity_tokens = -1;  // vLLM: `GPU KV cache size: N tokens`
  double accept_len = -1;             // speculative decoding
  int cuda_graph = -1;                // 0/1 (`cuda graph` or `cpu graph`)
};

struct LogRecord {
  LogLineKind kind = LogLineKind::Unknown;
  LogPrefix prefix;
  std::string message;  // the text after the prefix (at most kMaxMessage bytes)
  std::string problem;  // Malformed: "field 'fill_len': expected an integer, got 'x'"

  // Correction
  std::int64_t from = 0, to = 0, fill_len = 0, prefix_len = 0, kv_committed_len = 0;
  std::string session_id;
  // Correction, TransferFailed, KvPollTimeout, Aborted
  std::string rid;
  std::string bootstrap_room;
  // TransferFailed: 'P' or 'D' (which side logged it), the stage ("transfer", "bootstrap" for
  // `Prefill bootstrap failed`, "handshake" for `Decode handshake failed`), the rank, the exception
  char side = 0;
  std::string stage;
  int rank = -1;
  std::string exception;
  bool aborted = false;  // the failure was an AbortReq, not a broken link
  // The peer the line names: TransferFailed (from the exception: "remote mooncake session A",
  // "Failed to send kv chunk of R to A", "to prefill A", "bootstrap_addr: A"), LostConnection and
  // Reconnecting (the bootstrap address), SessionFailed and RecoveredViaProbe (the session)
  std::string remote;
  // KvPollTimeout (also set on a TransferFailed whose exception is a KVPoll timeout)
  double seconds = -1;
  std::string poll_state;  // "WaitingForInput", "Bootstrapping", ...
  // LostConnection; DecodeOutOfMemory: the requests retracted
  int affected = -1;
  // DecodeOutOfMemory: the scheduler's new_token_ratio before and after the retraction
  double ratio_before = -1, ratio_after = -1;
  BatchGauges batch;
  // RequestFinished (rid, session_id and bootstrap_room above): what the tokenizer manager reported;
  // -1 where the line carries nothing. finish_type: "stop", "length", "abort" ("" for None);
  // bootstrap_host: PD, the prefill the request's KV came from ("2.2.2.2": upstream's warm-up).
  std::int64_t prompt_tokens = -1, completion_tokens = -1, cached_tokens = -1;
  double e2e_s = -1, ttft_s = -1;
  std::string finish_type, bootstrap_host;
  // vLLM EngineStats: the data-parallel engine the line is for (prefix.dp), or the number of engines
  // an `N Engines Aggregated:` line sums (0 otherwise).
  int engines_aggregated = 0;
};

// The prefix is read by SchedulerLogPrefix and the batch lines by SchedulerBatchLine; the other
// messages here, their fields with LogFieldReader.
class SchedulerLogParser {
 public:
  static constexpr std::size_t kMaxMessage = 4096;

  static LogRecord parse(std::string_view line);
  // The prefix alone; `rest` gets the text after it. False when the line has none.
  static bool parsePrefix(std::string_view line, LogPrefix& prefix, std::string_view& rest);
};

}  // namespace kvscope
