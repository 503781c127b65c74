#include "core/live/SchedulerLogParser.h"

#include "core/live/LogFieldReader.h"
#include "core/live/MooncakeLogParser.h"
#include "core/live/SchedulerBatchLine.h"
#include "core/live/SchedulerLogPrefix.h"
#include "core/live/SglangRequestLog.h"
#include "core/live/VllmLogParser.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace kvscope {

const char* toString(LogLineKind k) {
  switch (k) {
    case LogLineKind::Unknown:
      return "unknown";
    case LogLineKind::Continuation:
      return "continuation";
    case LogLineKind::Malformed:
      return "malformed";
    case LogLineKind::Correction:
      return "correction";
    case LogLineKind::SchedulerException:
      return "scheduler_exception";
    case LogLineKind::Sigquit:
      return "sigquit";
    case LogLineKind::TransferFailed:
      return "transfer_failed";
    case LogLineKind::KvPollTimeout:
      return "kvpoll_timeout";
    case LogLineKind::Aborted:
      return "aborted";
    case LogLineKind::LostConnection:
      return "lost_connection";
    case LogLineKind::RecoveredViaProbe:
      return "recovered_via_probe";
    case LogLineKind::SessionFailed:
      return "session_failed";
    case LogLineKind::Reconnecting:
      return "reconnecting";
    case LogLineKind::TimeoutHint:
      return "timeout_hint";
    case LogLineKind::BootstrapError:
      return "bootstrap_error";
    case LogLineKind::MooncakeGlog:
      return "mooncake_glog";
    case LogLineKind::DecodeBatch:
      return "decode_batch";
    case LogLineKind::PrefillBatch:
      return "prefill_batch";
    case LogLineKind::ClientGenerateError:
      return "client_generate_error";
    case LogLineKind::DecodeOutOfMemory:
      return "decode_out_of_memory";
    case LogLineKind::EngineStats:
      return "engine_stats";
    case LogLineKind::KvCacheSize:
      return "kv_cache_size";
    case LogLineKind::RequestFinished:
      return "request_finished";
  }
  return "?";
}

namespace {

using namespace logtext;

void parseCorrection(std::string_view msg, LogRecord& r) {
  LogFieldReader f(r);
  r.kind = LogLineKind::Correction;
  r.from = f.integer(msg, "extend_input_len from ", "from");
  r.to = f.integer(msg, " to ", "to");
  const auto open = msg.find('(');
  const std::string_view args = open == std::string_view::npos ? std::string_view() : msg.substr(open);
  if (open == std::string_view::npos) f.fail("fill_len", "a '(rid=..., fill_len=...)' list", msg);
  r.fill_len = f.integer(args, "fill_len=", "fill_len");
  r.prefix_len = f.integer(args, "prefix_len=", "prefix_len");
  r.kv_committed_len = f.integer(args, "kv_committed_len=", "kv_committed_len");
  if (const auto rid = valueAfter(args, "rid=")) r.rid = std::string(*rid);
  if (const auto s = valueAfter(args, "session_id=")) r.session_id = std::string(*s);
}

void parseKvPoll(std::string_view msg, LogRecord& r, bool set_kind) {
  const auto at = msg.find("timed out after ");
  const auto in = msg.find("s in KVPoll.", at);
  if (at == std::string_view::npos || in == std::string_view::npos) return;
  const std::string_view secs = msg.substr(at + 16, in - at - 16);
  const auto v = toDouble(secs);
  if (set_kind) r.kind = LogLineKind::KvPollTimeout;
  if (!v || *v < 0) {
    LogFieldReader(r).fail("seconds", "a number of seconds", secs);
    return;
  }
  r.seconds = *v;
  std::string_view state = msg.substr(in + 12);
  std::size_t n = 0;
  while (n < state.size() && (std::isalnum(static_cast<unsigned char>(state[n])) || state[n] == '_')) ++n;
  r.poll_state = std::string(state.substr(0, n));
  if (set_kind) {
    const auto req = msg.find("Request ");
    if (req != std::string_view::npos && req < at) r.rid = std::string(trim(msg.substr(req + 8, at - req - 8)));
  }
}

// The peer an exception names, in the shapes upstream's KVTransferError reasons take
// (mooncake/conn.py, common/conn.py): first match wins.
std::string remoteIn(std::string_view text) {
  static constexpr std::string_view kBefore[] = {"remote mooncake session ", "bootstrap_addr: ", "to prefill "};
  for (const auto key : kBefore)
    if (const auto at = ifind(text, key); at != std::string_view::npos)
      return std::string(addressAt(text.substr(at + key.size())));
  // "Failed to send kv chunk of R to H:P", "... state components of R to H:P"
  if (const auto at = ifind(text, "Failed to send "); at != std::string_view::npos)
    if (const auto to = text.find(" to ", at + 15); to != std::string_view::npos)
      return std::string(addressAt(text.substr(to + 4)));
  // requests' "HTTPConnectionPool(host='H', port=P): Max retries exceeded ..."
  if (const auto host = text.find("host='"); host != std::string_view::npos) {
    const auto end = text.find('\'', host + 6);
    const auto port = text.find("port=", host);
    if (end != std::string_view::npos && port != std::string_view::npos) {
      std::size_t n = port + 5;
      while (n < text.size() && isDigit(text[n])) ++n;
      if (n > port + 5)
        return std::string(text.substr(host + 6, end - host - 6)) + ":" +
               std::string(text.substr(port + 5, n - port - 5));
    }
  }
  return {};
}

void parseTransferFailed(std::string_view msg, LogRecord& r) {
  r.kind = LogLineKind::TransferFailed;
  r.side = msg.front() == 'P' ? 'P' : 'D';
  r.stage = msg.find(" handshake failed") != std::string_view::npos   ? "handshake"
            : msg.find(" bootstrap failed") != std::string_view::npos ? "bootstrap"
                                                                      : "transfer";
  LogFieldReader f(r);
  const auto with = msg.find(" with exception ");
  const std::string_view head = with == std::string_view::npos ? msg : msg.substr(0, with);
  const auto rank = f.integer(head, "rank=", "rank");
  r.rank = rank >= 0 && rank <= std::numeric_limits<int>::max() ? static_cast<int>(rank) : -1;
  if (const auto rid = valueAfter(head, "rid=")) r.rid = std::string(*rid);
  if (const auto room = valueAfter(head, "bootstrap_room=")) r.bootstrap_room = std::string(*room);
  if (with == std::string_view::npos) {
    f.fail("exception", "' with exception ...'", head.substr(head.size() > 40 ? head.size() - 40 : 0));
    return;
  }
  const std::string_view exception = msg.substr(with + 16);
  r.exception = std::string(exception);
  // Older lines (`rank=0` alone) name the room only inside KVTransferError(bootstrap_room=R).
  if (r.bootstrap_room.empty())
    if (const auto room = valueAfter(exception, "bootstrap_room=")) r.bootstrap_room = std::string(*room);
  r.remote = remoteIn(exception);
  r.aborted = msg.find("Aborted by AbortReq") != std::string_view::npos;
  parseKvPoll(msg, r, false);
}

void parseLostConnection(std::string_view msg, LogRecord& r) {
  r.kind = LogLineKind::LostConnection;
  LogFieldReader f(r);
  const auto open = msg.find("(bootstrap_addr: ");
  const auto close = open == std::string_view::npos ? open : msg.find(')', open);
  if (close == std::string_view::npos) {
    f.fail("bootstrap_addr", "'(bootstrap_addr: HOST:PORT)'", msg);
    return;
  }
  r.remote = std::string(trim(msg.substr(open + 17, close - open - 17)));
  std::string_view rest = trim(msg.substr(close + 1));
  if (rest.starts_with(",")) rest = trim(rest.substr(1));
  // Older mooncake/conn.py: "Losing connection with prefill instance (bootstrap_addr: A), affected N requests"
  if (rest.starts_with("affected ")) {
    rest.remove_prefix(9);
    std::size_t k = 0;
    while (k < rest.size() && isDigit(rest[k])) ++k;
    const auto count = toInt(rest.substr(0, k));
    if (!count || *count > 100'000'000 || !rest.substr(k).starts_with(" request")) {
      f.fail("affected", "'affected N requests'", rest);
      return;
    }
    r.affected = static_cast<int>(*count);
    return;
  }
  std::size_t n = 0;
  while (n < rest.size() && isDigit(rest[n])) ++n;
  const auto count = toInt(rest.substr(0, n));
  if (!count || *count > 100'000'000 ||
      !(rest.substr(n).starts_with(" requests affected") || rest.substr(n).starts_with(" transfers affected"))) {
    f.fail("affected", "'N requests affected'", rest);
    return;
  }
  r.affected = static_cast<int>(*count);
}

// A decode worker ran out of KV while decoding and retracted requests to its waiting queue
// (scheduler.py get_new_batch_decode / update_running_batch):
//   "Decode out of memory happened. #retracted_reqs: 2, #new_token_ratio: 0.4000 -> 0.7000"
// 2024's tp_worker.py wrote "decode out of memory happened, " before the same two fields.
void parseDecodeOutOfMemory(std::string_view msg, LogRecord& r) {
  r.kind = LogLineKind::DecodeOutOfMemory;
  LogFieldReader f(r);
  const std::int64_t n = f.integer(msg, "#retracted_reqs: ", "retracted_reqs");
  if (f.failed()) return;
  if (n > 100'000'000) return f.fail("retracted_reqs", "a request count", std::to_string(n));
  r.affected = static_cast<int>(n);
  const auto at = msg.find("#new_token_ratio: ");
  if (at == std::string_view::npos) return;  // the count is what matters; the ratio is extra
  const std::string_view ratios = trim(msg.substr(at + 18));
  const auto arrow = ratios.find(" -> ");
  const auto before = toDouble(trim(ratios.substr(0, arrow)));
  const auto after = arrow == std::string_view::npos ? std::nullopt : toDouble(trim(ratios.substr(arrow + 4)));
  if (!before || !after || *before < 0 || *after < 0) return f.fail("new_token_ratio", "'A -> B' (two ratios)", ratios);
  r.ratio_before = *before;
  r.ratio_after = *after;
}

// The classifiers below return true when the line is of their kind (`r` then says what it holds).

// The scheduler's own lines, known by their first words: a correction, a crash, a transfer failure,
// a lost prefill, a batch line, a decode out of memory.
bool classifySchedulerLine(std::string_view msg, LogRecord& r, bool prefixed) {
  if (msg.starts_with("Correcting streaming-session extend_input_len")) {
    parseCorrection(msg, r);
    return true;
  }
  // The crash: "Scheduler hit an exception: Traceback ..." (scheduler.py since 2024-11); before
  // that run_scheduler_process logged the bare traceback, and tp_worker.py "Exception in
  // ModelTpServer:" followed by it. An unprefixed "Traceback" is a traceback's own first line.
  if (msg.starts_with("Scheduler hit an exception") || msg.starts_with("Exception in ModelTpServer") ||
      (prefixed && msg.starts_with("Traceback (most recent call last)"))) {
    r.kind = LogLineKind::SchedulerException;
    return true;
  }
  if (msg.starts_with("Received sigquit from a child process")) {
    r.kind = LogLineKind::Sigquit;
    return true;
  }
  if (msg.starts_with("Prefill transfer failed") || msg.starts_with("Decode transfer failed") ||
      msg.starts_with("Prefill bootstrap failed") || msg.starts_with("Decode handshake failed")) {
    parseTransferFailed(msg, r);
    return true;
  }
  if (msg.starts_with("Lost connection with prefill instance") ||
      msg.starts_with("Losing connection with prefill instance")) {
    parseLostConnection(msg, r);
    return true;
  }
  if (msg.starts_with("Decode batch") || msg.starts_with("Prefill batch")) {
    SchedulerBatchLine::parse(msg, r);
    return true;
  }
  if (istarts(msg, "Decode out of memory happened")) {
    parseDecodeOutOfMemory(msg, r);
    return true;
  }
  return false;
}

// Requests the scheduler aborted itself (not a link's failure), and a decode giving up on a
// prefill's bootstrap server, which aborts the requests waiting on it.
bool classifyAbort(std::string_view msg, LogRecord& r) {
  // decode.py _ensure_prefill_info: the decode gave up on a prefill's bootstrap server and aborted
  // the requests waiting on it.
  if (msg.starts_with("Could not fetch prefill parallel info from ")) {
    r.kind = LogLineKind::LostConnection;
    r.remote = std::string(addressAt(msg.substr(43)));
    return true;
  }
  // A request aborted by the scheduler itself (decode.py, prefill.py), not by a link.
  static constexpr std::string_view kAborts[] = {"Metadata unexpectedly not ready after readiness gate",
                                                 "Context corruption detected: Request "};
  for (const auto a : kAborts)
    if (msg.starts_with(a)) {
      r.kind = LogLineKind::Aborted;
      if (const auto at = msg.find("request "); at != std::string_view::npos)
        r.rid = std::string(addressAt(msg.substr(at + 8)));
      if (const auto at = msg.find("Request "); at != std::string_view::npos)
        r.rid = std::string(addressAt(msg.substr(at + 8)));
      if (const auto room = valueAfter(msg, "bootstrap_room=")) r.bootstrap_room = std::string(*room);
      return true;
    }
  if (msg.starts_with("Request ") && msg.find(" exceeds the maximum number of tokens") != std::string_view::npos) {
    r.kind = LogLineKind::Aborted;
    r.rid = std::string(addressAt(msg.substr(8)));
    return true;
  }
  return false;
}

// A P/D link in doubt, down or back: a bootstrap server that could not be reached, a Mooncake
// session failed or recovered, a heartbeat reconnecting.
bool classifyLink(std::string_view msg, LogRecord& r) {
  // The bootstrap server of a prefill could not be asked or told (common/conn.py, older
  // mooncake/conn.py): the link is in doubt, no request has failed yet.
  static constexpr std::string_view kBootstrap[] = {"Error fetching prefill info from bootstrap",
                                                    "Error fetching prefill parallel info from bootstrap",
                                                    "Failed to get prefill server info",
                                                    "Failed to get prefill parallel info",
                                                    "Error querying dp_ranks from bootstrap",
                                                    "Failed to query dp_ranks",
                                                    "Prefill instance failed to register to bootstrap server",
                                                    "Prefill instance failed to connect to bootstrap server",
                                                    "Failed to register prefill dp_rank"};
  for (const auto b : kBootstrap)
    if (msg.starts_with(b)) {
      r.kind = LogLineKind::BootstrapError;
      r.remote = remoteIn(msg);
      return true;
    }
  if (istarts(msg, "Session ")) {
    const std::string_view rest = msg.substr(8);
    const std::string_view session = rest.substr(0, rest.find(' '));
    const std::string_view tail = trim(rest.substr(session.size()));
    if (ifind(tail, "recovered via probe") == 0) {
      r.kind = LogLineKind::RecoveredViaProbe;
      r.remote = std::string(session);
      return true;
    }
    // mooncake/conn.py: logger.error(f"Session {session} failed.") (later "Session %s failed.")
    if (!session.empty() && (tail == "failed." || tail == "failed" || ifind(tail, "failed.") == 0)) {
      r.kind = LogLineKind::SessionFailed;
      r.remote = std::string(session);
      return true;
    }
  }
  if (msg.starts_with("Attempting to reconnect to ")) {  // common/conn.py heartbeat_checker
    r.kind = LogLineKind::Reconnecting;
    r.remote = std::string(addressAt(msg.substr(27)));
    return true;
  }
  return false;
}

// `prefixed`: the line had SGLang's prefix. Without it only formats recognised by their first
// words count, so a traceback frame that merely mentions one stays a continuation. The kinds are
// tried in this order; the first that recognises the line wins.
void classify(std::string_view msg, LogRecord& r, bool prefixed) {
  if (classifySchedulerLine(msg, r, prefixed) || classifyAbort(msg, r) || classifyLink(msg, r)) return;
  if (msg.starts_with("Some requests timed out when bootstrapping") ||
      msg.starts_with("Some requests fail to receive KV Cache transfer done signal")) {
    r.kind = LogLineKind::TimeoutHint;  // warning_once: the failures follow as their own lines
    return;
  }
  if (msg.starts_with("Request ") && msg.ends_with(" waiting_timeout")) {  // older mooncake/conn.py
    r.kind = LogLineKind::KvPollTimeout;
    r.rid = std::string(trim(msg.substr(8, msg.size() - 8 - 16)));
    r.bootstrap_room = r.rid;
    r.poll_state = "WaitingForInput";
    return;
  }
  if (msg.find("RuntimeError: generate stream ended before producing any token") != std::string_view::npos) {
    r.kind = LogLineKind::ClientGenerateError;
    return;
  }
  if (!prefixed) return;
  if (msg.find(" timed out after ") != std::string_view::npos && msg.find("s in KVPoll.") != std::string_view::npos)
    return parseKvPoll(msg, r, true);
  if (msg.find("Aborted by AbortReq") != std::string_view::npos) {
    r.kind = LogLineKind::Aborted;
    if (const auto rid = valueAfter(msg, "rid=")) r.rid = std::string(*rid);
    if (const auto room = valueAfter(msg, "bootstrap_room=")) r.bootstrap_room = std::string(*room);
    return;
  }
}

}  // namespace

bool SchedulerLogParser::parsePrefix(std::string_view line, LogPrefix& p, std::string_view& rest) {
  return SchedulerLogPrefix::parse(line, p, rest);
}

LogRecord SchedulerLogParser::parse(std::string_view line) {
  if (auto vllm = VllmLogParser::parse(line)) return std::move(*vllm);
  LogRecord r;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  std::string_view msg;
  if (SglangRequestLog::parseJson(line, r)) return r;
  if (!parsePrefix(line, r.prefix, msg)) {
    if (SglangRequestLog::parseText(line, r)) return r;  // 0.5.10 prints request lines bare
    msg = line;
    r.message = std::string(msg.substr(0, kMaxMessage));
    // Mooncake's engine logs to the worker's stderr too, in glog's format.
    MooncakeLogRecord glog;
    std::string_view glog_message;
    if (MooncakeLogParser::parsePrefix(line, glog, glog_message)) {
      r.kind = LogLineKind::MooncakeGlog;
      return r;
    }
    // The client's error has no scheduler prefix, and a log collected without SGLang's prefix
    // still starts with the message; every other unprefixed line continues the last one.
    classify(msg.substr(0, std::min(msg.size(), kMaxMessage)), r, false);
    if (r.kind == LogLineKind::Unknown) r.kind = LogLineKind::Continuation;
    return r;
  }
  if (SglangRequestLog::parseText(msg, r)) return r;
  r.message = std::string(msg.substr(0, kMaxMessage));
  classify(msg.substr(0, std::min(msg.size(), kMaxMessage)), r, true);
  return r;
}

}  // namespace kvscope
