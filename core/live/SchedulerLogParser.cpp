#include "core/live/SchedulerLogParser.h"

#include "core/live/MooncakeLogParser.h"
#include "core/live/VllmLogParser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
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
  }
  return "?";
}

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string shown(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out + (s.size() > 40 ? "...'" : "'");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// ASCII case-insensitive find: upstream spelled some Mooncake messages both ways
// ("Failed to send kv chunk" / "Failed to send KV chunk").
std::size_t ifind(std::string_view text, std::string_view needle, std::size_t from = 0) {
  if (needle.size() > text.size()) return std::string_view::npos;
  for (std::size_t i = from; i + needle.size() <= text.size(); ++i) {
    std::size_t k = 0;
    while (k < needle.size() && lower(text[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

bool istarts(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && ifind(text.substr(0, prefix.size()), prefix) == 0;
}

// A HOST:PORT (or [v6]:PORT) token at the start of `s`, without trailing punctuation.
std::string_view addressAt(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] != ' ' && s[n] != ',' && s[n] != ')' && s[n] != ';' && s[n] != '\'' && s[n] != '"') ++n;
  std::string_view a = s.substr(0, n);
  while (!a.empty() && (a.back() == '.' || a.back() == ':')) a.remove_suffix(1);
  return a;
}

std::optional<std::int64_t> toInt(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> toDouble(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The value after `key` up to a delimiter; quotes ('x' or "x") are removed.
std::optional<std::string_view> valueAfter(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + key.size());
  if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
    const char q = rest.front();
    const auto close = rest.find(q, 1);
    return close == std::string_view::npos ? rest.substr(1) : rest.substr(1, close - 1);
  }
  std::size_t n = 0;
  while (n < rest.size() && rest[n] != ',' && rest[n] != ' ' && rest[n] != ')' && rest[n] != ';') ++n;
  return rest.substr(0, n);
}

// Howard Hinnant's days_from_civil: the prefix's date as a day count, with no time-zone lookup.
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Fields {
  LogRecord& r;
  bool failed = false;
  void fail(std::string_view field, std::string_view expected, std::string_view got) {
    if (failed) return;
    failed = true;
    r.kind = LogLineKind::Malformed;
    r.problem = "field '" + std::string(field) + "': expected " + std::string(expected) + ", got " + shown(got);
  }
  std::int64_t integer(std::string_view text, std::string_view key, std::string_view field, bool required = true) {
    const auto v = valueAfter(text, key);
    if (!v) {
      if (required) fail(field, "an integer", "nothing");
      return -1;
    }
    const auto n = toInt(*v);
    if (!n || *n < 0) {
      fail(field, "an integer >= 0", *v);
      return -1;
    }
    return *n;
  }
};

void parseCorrection(std::string_view msg, LogRecord& r) {
  Fields f{r};
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
    Fields{r}.fail("seconds", "a number of seconds", secs);
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
  Fields f{r};
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
  Fields f{r};
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
  Fields f{r};
  const std::int64_t n = f.integer(msg, "#retracted_reqs: ", "retracted_reqs");
  if (f.failed) return;
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

// "#running-req: 3, #token: 100, token usage: 0.10, cuda graph: True, gen throughput (token/s): 12.5"
// Keys come from scheduler_metrics_mixin.py (log_prefill_stats / log_decode_stats) and its older
// homes (scheduler.py, tp_worker.py) and pool_stats (the hybrid pools); unknown keys are skipped.
void parseBatch(std::string_view list, LogRecord& r) {
  Fields f{r};
  BatchGauges& b = r.batch;
  while (!list.empty()) {
    const auto comma = list.find(", ");
    const std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 2);
    const auto colon = item.rfind(": ");
    if (colon == std::string_view::npos) continue;  // newer SGLang adds fields in other shapes
    const std::string_view key = item.substr(0, colon), value = trim(item.substr(colon + 2));
    struct IntField {
      std::string_view key;
      std::int64_t BatchGauges::*field;
    };
    static constexpr IntField kInts[] = {{"#running-req", &BatchGauges::running_req},
                                         {"#queue-req", &BatchGauges::queue_req},
                                         {"#token", &BatchGauges::tokens},
                                         {"#new-seq", &BatchGauges::new_seq},
                                         {"#new-token", &BatchGauges::new_token},
                                         {"#cached-token", &BatchGauges::cached_token},
                                         {"#prealloc-req", &BatchGauges::prealloc_req},
                                         {"#transfer-req", &BatchGauges::transfer_req},
                                         {"#retracted-req", &BatchGauges::retracted_req},
                                         {"#inflight-req", &BatchGauges::inflight_req},
                                         {"#bootstrap-req", &BatchGauges::bootstrap_req},
                                         {"#pending-token", &BatchGauges::pending_token},
                                         {"#full token", &BatchGauges::full_tokens},
                                         {"#swa token", &BatchGauges::swa_tokens},
                                         {"mamba num", &BatchGauges::mamba_num}};
    struct RatioField {
      std::string_view key;
      double BatchGauges::*field;
    };
    static constexpr RatioField kRatios[] = {{"token usage", &BatchGauges::token_usage},
                                             {"pre-allocated usage", &BatchGauges::preallocated_usage},
                                             {"gen throughput (token/s)", &BatchGauges::gen_throughput},
                                             {"input throughput (token/s)", &BatchGauges::input_throughput},
                                             {"full token usage", &BatchGauges::full_usage},
                                             {"swa token usage", &BatchGauges::swa_usage},
                                             {"mamba usage", &BatchGauges::mamba_usage},
                                             {"accept len", &BatchGauges::accept_len}};
    for (const auto& i : kInts) {
      if (key != i.key) continue;
      const auto n = toInt(value);
      if (!n || *n < 0) return f.fail(key, "an integer >= 0", value);
      b.*i.field = *n;
    }
    for (const auto& d : kRatios) {
      if (key != d.key) continue;
      const auto v = toDouble(value);
      if (!v || *v < 0) return f.fail(key, "a number >= 0", value);
      b.*d.field = *v;
    }
    if (key == "cache hit rate") {
      const auto v = toDouble(value.ends_with('%') ? value.substr(0, value.size() - 1) : value);
      if (!v || *v < 0) return f.fail(key, "a percentage", value);
      b.cache_hit_rate = *v / 100.0;
    }
    if (key == "cuda graph" || key == "cpu graph") {
      if (value != "True" && value != "False") return f.fail(key, "True or False", value);
      b.cuda_graph = value == "True";
    }
  }
  // A hybrid model's line has per-pool numbers only: the worker's figure is upstream's.
  if (b.tokens < 0 && b.full_tokens >= 0) b.tokens = std::max(b.full_tokens, b.swa_tokens);
  if (b.token_usage < 0 && b.full_usage >= 0) b.token_usage = std::max(b.full_usage, b.swa_usage);
  if (r.kind == LogLineKind::DecodeBatch && b.running_req < 0) f.fail("#running-req", "the field", "nothing");
  if (r.kind == LogLineKind::PrefillBatch && b.new_seq < 0) f.fail("#new-seq", "the field", "nothing");
}

// What follows "Decode batch" / "Prefill batch": ". ", ", ", " [N], " (SGLANG_LOG_FORWARD_ITERS)
// or "(mixed #running-req: N). " (older mixed chunked prefill).
void parseBatchLine(std::string_view msg, LogRecord& r) {
  r.kind = msg.front() == 'D' ? LogLineKind::DecodeBatch : LogLineKind::PrefillBatch;
  msg.remove_prefix(msg.find("batch") + 5);
  if (msg.starts_with("(mixed #running-req: ")) {
    const auto close = msg.find(')');
    if (const auto n = toInt(msg.substr(21, close == std::string_view::npos ? 0 : close - 21)))
      r.batch.mixed_running_req = *n;
    if (close != std::string_view::npos) msg.remove_prefix(close + 1);
  } else if (msg.starts_with(" [")) {
    const auto close = msg.find(']');
    if (const auto n = toInt(msg.substr(2, close == std::string_view::npos ? 0 : close - 2))) r.batch.iteration = *n;
    if (close != std::string_view::npos) msg.remove_prefix(close + 1);
  }
  while (!msg.empty() && (msg.front() == ',' || msg.front() == '.' || msg.front() == ' ')) msg.remove_prefix(1);
  parseBatch(msg, r);
}

// `prefixed`: the line had SGLang's prefix. Without it only formats recognised by their first
// words count, so a traceback frame that merely mentions one stays a continuation.
void classify(std::string_view msg, LogRecord& r, bool prefixed) {
  if (msg.starts_with("Correcting streaming-session extend_input_len")) return parseCorrection(msg, r);
  // The crash: "Scheduler hit an exception: Traceback ..." (scheduler.py since 2024-11); before
  // that run_scheduler_process logged the bare traceback, and tp_worker.py "Exception in
  // ModelTpServer:" followed by it. An unprefixed "Traceback" is a traceback's own first line.
  if (msg.starts_with("Scheduler hit an exception") || msg.starts_with("Exception in ModelTpServer") ||
      (prefixed && msg.starts_with("Traceback (most recent call last)"))) {
    r.kind = LogLineKind::SchedulerException;
    return;
  }
  if (msg.starts_with("Received sigquit from a child process")) {
    r.kind = LogLineKind::Sigquit;
    return;
  }
  if (msg.starts_with("Prefill transfer failed") || msg.starts_with("Decode transfer failed") ||
      msg.starts_with("Prefill bootstrap failed") || msg.starts_with("Decode handshake failed"))
    return parseTransferFailed(msg, r);
  if (msg.starts_with("Lost connection with prefill instance") ||
      msg.starts_with("Losing connection with prefill instance"))
    return parseLostConnection(msg, r);
  if (msg.starts_with("Decode batch") || msg.starts_with("Prefill batch")) return parseBatchLine(msg, r);
  if (istarts(msg, "Decode out of memory happened")) return parseDecodeOutOfMemory(msg, r);
  // decode.py _ensure_prefill_info: the decode gave up on a prefill's bootstrap server and aborted
  // the requests waiting on it.
  if (msg.starts_with("Could not fetch prefill parallel info from ")) {
    r.kind = LogLineKind::LostConnection;
    r.remote = std::string(addressAt(msg.substr(43)));
    return;
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
      return;
    }
  if (msg.starts_with("Request ") && msg.find(" exceeds the maximum number of tokens") != std::string_view::npos) {
    r.kind = LogLineKind::Aborted;
    r.rid = std::string(addressAt(msg.substr(8)));
    return;
  }
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
      return;
    }
  if (istarts(msg, "Session ")) {
    const std::string_view rest = msg.substr(8);
    const std::string_view session = rest.substr(0, rest.find(' '));
    const std::string_view tail = trim(rest.substr(session.size()));
    if (ifind(tail, "recovered via probe") == 0) {
      r.kind = LogLineKind::RecoveredViaProbe;
      r.remote = std::string(session);
      return;
    }
    // mooncake/conn.py: logger.error(f"Session {session} failed.") (later "Session %s failed.")
    if (!session.empty() && (tail == "failed." || tail == "failed" || ifind(tail, "failed.") == 0)) {
      r.kind = LogLineKind::SessionFailed;
      r.remote = std::string(session);
      return;
    }
  }
  if (msg.starts_with("Attempting to reconnect to ")) {  // common/conn.py heartbeat_checker
    r.kind = LogLineKind::Reconnecting;
    r.remote = std::string(addressAt(msg.substr(27)));
    return;
  }
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

namespace {

// One rank tag: capitals with inner underscores, then digits ("TP0", "ATTN_CP1", "MOE_DP2").
bool rankTag(std::string_view line, std::size_t& i, LogPrefix& out) {
  std::size_t k = i;
  while (k < line.size() && ((line[k] >= 'A' && line[k] <= 'Z') || (line[k] == '_' && k > i))) ++k;
  const std::string_view tag = line.substr(i, k - i);
  std::size_t n = k;
  while (n < line.size() && isDigit(line[n])) ++n;
  const auto rank = toInt(line.substr(k, n - k));
  if (tag.empty() || tag.back() == '_' || !rank || *rank > 1'000'000) return false;
  const int v = static_cast<int>(*rank);
  if (tag == "TP")
    out.tp = v;
  else if (tag == "DP")
    out.dp = v;
  else if (tag == "PP")
    out.pp = v;
  else if (tag == "EP")
    out.ep = v;
  else if (tag == "CP")
    out.cp = v;
  else if (tag == "ATTN_CP")
    out.attn_cp = v;
  else if (tag == "MOE_DP")
    out.moe_dp = v;
  i = n;
  return true;
}

}  // namespace

bool SchedulerLogParser::parsePrefix(std::string_view line, LogPrefix& p, std::string_view& rest) {
  // "[YYYY-MM-DD HH:MM:SS" = 20 characters, then optional ".mmm" (or ",mmm"), rank tags, "] ".
  // Without asctime: "[TP0] ", "[DP1 TP3] " (rank tags only, at least one).
  if (line.size() < 4 || line[0] != '[') return false;
  LogPrefix out;
  std::size_t i = 1;
  std::int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (isDigit(line[1])) {
    if (line.size() < 22) return false;
    const std::string_view d = line.substr(1, 19);
    static constexpr char kShape[] = "dddd-dd-dd dd:dd:dd";
    for (std::size_t k = 0; k < 19; ++k)
      if (kShape[k] == 'd' ? !isDigit(d[k]) : d[k] != kShape[k]) return false;
    const auto num = [&](std::size_t at, std::size_t n) { return *toInt(d.substr(at, n)); };
    year = num(0, 4), month = num(5, 2), day = num(8, 2), hour = num(11, 2), minute = num(14, 2), second = num(17, 2);
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
    i = 20;
    if (i < line.size() && (line[i] == ',' || line[i] == '.')) {
      const std::size_t from = ++i;
      while (i < line.size() && isDigit(line[i])) ++i;
      if (const auto ms = toInt(line.substr(from, std::min<std::size_t>(i - from, 3))))
        out.millis = static_cast<int>(*ms);
    }
    out.has_time = true;
    out.timestamp = std::string(d);
    while (i < line.size() && line[i] == ' ') {
      ++i;
      if (!rankTag(line, i, out)) return false;
    }
  } else if (line.starts_with("[gpu_id=")) {
    // 2024 tp_worker.py wrote its own "[gpu_id=N] " in front of the message, with no asctime.
    i = 8;
    const std::size_t from = i;
    while (i < line.size() && isDigit(line[i])) ++i;
    const auto gpu = toInt(line.substr(from, i - from));
    if (!gpu || *gpu > 1'000'000) return false;
    out.gpu = static_cast<int>(*gpu);
  } else {
    if (!rankTag(line, i, out)) return false;
    while (i < line.size() && line[i] == ' ') {
      ++i;
      if (!rankTag(line, i, out)) return false;
    }
  }
  if (i >= line.size() || line[i] != ']') return false;
  ++i;
  if (i < line.size() && line[i] == ' ') ++i;
  out.present = true;
  if (out.has_time)
    out.clock_s = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
                  minute * 60 + second;
  p = std::move(out);
  rest = line.substr(i);
  return true;
}

LogRecord SchedulerLogParser::parse(std::string_view line) {
  if (auto vllm = VllmLogParser::parse(line)) return std::move(*vllm);
  LogRecord r;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  std::string_view msg;
  if (!parsePrefix(line, r.prefix, msg)) {
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
  r.message = std::string(msg.substr(0, kMaxMessage));
  classify(msg.substr(0, std::min(msg.size(), kMaxMessage)), r, true);
  return r;
}

}  // namespace kvscope
