#include "live/SchedulerLogParser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace kvscope {

const char* toString(LogLineKind k) {
  switch (k) {
    case LogLineKind::Unknown: return "unknown";
    case LogLineKind::Continuation: return "continuation";
    case LogLineKind::Malformed: return "malformed";
    case LogLineKind::Correction: return "correction";
    case LogLineKind::SchedulerException: return "scheduler_exception";
    case LogLineKind::Sigquit: return "sigquit";
    case LogLineKind::TransferFailed: return "transfer_failed";
    case LogLineKind::KvPollTimeout: return "kvpoll_timeout";
    case LogLineKind::Aborted: return "aborted";
    case LogLineKind::LostConnection: return "lost_connection";
    case LogLineKind::RecoveredViaProbe: return "recovered_via_probe";
    case LogLineKind::DecodeBatch: return "decode_batch";
    case LogLineKind::PrefillBatch: return "prefill_batch";
    case LogLineKind::ClientGenerateError: return "client_generate_error";
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

void parseTransferFailed(std::string_view msg, LogRecord& r) {
  r.kind = LogLineKind::TransferFailed;
  r.side = msg.front() == 'P' ? 'P' : 'D';
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
  r.exception = std::string(msg.substr(with + 16));
  if (const auto at = msg.find("remote mooncake session "); at != std::string_view::npos) {
    std::string_view rest = msg.substr(at + 24);
    r.remote = std::string(rest.substr(0, rest.find(' ')));
  }
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

// "#running-req: 3, #token: 100, token usage: 0.10, cuda graph: True, gen throughput (token/s): 12.5"
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
    struct IntField { std::string_view key; std::int64_t BatchGauges::*field; };
    static constexpr IntField kInts[] = {
        {"#running-req", &BatchGauges::running_req},   {"#queue-req", &BatchGauges::queue_req},
        {"#token", &BatchGauges::tokens},              {"#new-seq", &BatchGauges::new_seq},
        {"#new-token", &BatchGauges::new_token},       {"#cached-token", &BatchGauges::cached_token},
        {"#prealloc-req", &BatchGauges::prealloc_req}, {"#transfer-req", &BatchGauges::transfer_req},
        {"#retracted-req", &BatchGauges::retracted_req}, {"#inflight-req", &BatchGauges::inflight_req}};
    struct RatioField { std::string_view key; double BatchGauges::*field; };
    static constexpr RatioField kRatios[] = {{"token usage", &BatchGauges::token_usage},
                                             {"pre-allocated usage", &BatchGauges::preallocated_usage},
                                             {"gen throughput (token/s)", &BatchGauges::gen_throughput}};
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
    if (key == "cuda graph") {
      if (value != "True" && value != "False") return f.fail(key, "True or False", value);
      b.cuda_graph = value == "True";
    }
  }
  if (r.kind == LogLineKind::DecodeBatch && b.running_req < 0) f.fail("#running-req", "the field", "nothing");
  if (r.kind == LogLineKind::PrefillBatch && b.new_seq < 0) f.fail("#new-seq", "the field", "nothing");
}

void classify(std::string_view msg, LogRecord& r) {
  if (msg.starts_with("Correcting streaming-session extend_input_len")) return parseCorrection(msg, r);
  if (msg.starts_with("Scheduler hit an exception")) {
    r.kind = LogLineKind::SchedulerException;
    return;
  }
  if (msg.starts_with("Received sigquit from a child process")) {
    r.kind = LogLineKind::Sigquit;
    return;
  }
  if (msg.starts_with("Prefill transfer failed") || msg.starts_with("Decode transfer failed") ||
      msg.starts_with("Prefill bootstrap failed"))
    return parseTransferFailed(msg, r);
  if (msg.starts_with("Lost connection with prefill instance")) return parseLostConnection(msg, r);
  if (msg.starts_with("Decode batch") || msg.starts_with("Prefill batch")) {
    r.kind = msg.front() == 'D' ? LogLineKind::DecodeBatch : LogLineKind::PrefillBatch;
    msg.remove_prefix(msg.find("batch") + 5);
    while (!msg.empty() && (msg.front() == ',' || msg.front() == '.' || msg.front() == ' ')) msg.remove_prefix(1);
    return parseBatch(msg, r);
  }
  if (msg.starts_with("Session ") && msg.find(" recovered via probe") != std::string_view::npos) {
    r.kind = LogLineKind::RecoveredViaProbe;
    const std::string_view rest = msg.substr(8);
    r.remote = std::string(rest.substr(0, rest.find(' ')));
    return;
  }
  if (msg.find("RuntimeError: generate stream ended before producing any token") != std::string_view::npos) {
    r.kind = LogLineKind::ClientGenerateError;
    return;
  }
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
  // "[YYYY-MM-DD HH:MM:SS" = 20 characters, then optional ",mmm", rank tags, then "] ".
  if (line.size() < 22 || line[0] != '[') return false;
  const std::string_view d = line.substr(1, 19);
  static constexpr char kShape[] = "dddd-dd-dd dd:dd:dd";
  for (std::size_t i = 0; i < 19; ++i)
    if (kShape[i] == 'd' ? !isDigit(d[i]) : d[i] != kShape[i]) return false;
  const auto num = [&](std::size_t at, std::size_t n) { return *toInt(d.substr(at, n)); };
  const std::int64_t year = num(0, 4), month = num(5, 2), day = num(8, 2), hour = num(11, 2), minute = num(14, 2),
                     second = num(17, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
  std::size_t i = 20;
  if (i < line.size() && (line[i] == ',' || line[i] == '.')) {
    ++i;
    while (i < line.size() && isDigit(line[i])) ++i;
  }
  LogPrefix out;
  while (i < line.size() && line[i] == ' ') {
    ++i;
    std::size_t k = i;
    while (k < line.size() && line[k] >= 'A' && line[k] <= 'Z') ++k;
    const std::string_view tag = line.substr(i, k - i);
    std::size_t n = k;
    while (n < line.size() && isDigit(line[n])) ++n;
    const auto rank = toInt(line.substr(k, n - k));
    if (tag.empty() || !rank || *rank > 1'000'000) return false;
    const int v = static_cast<int>(*rank);
    if (tag == "TP") out.tp = v;
    else if (tag == "DP") out.dp = v;
    else if (tag == "PP") out.pp = v;
    else if (tag == "EP") out.ep = v;
    i = n;
  }
  if (i >= line.size() || line[i] != ']') return false;
  ++i;
  if (i < line.size() && line[i] == ' ') ++i;
  out.present = true;
  out.timestamp = std::string(d);
  out.clock_s = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
                minute * 60 + second;
  p = std::move(out);
  rest = line.substr(i);
  return true;
}

LogRecord SchedulerLogParser::parse(std::string_view line) {
  LogRecord r;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  std::string_view msg;
  if (!parsePrefix(line, r.prefix, msg)) {
    msg = line;
    // The client's error has no scheduler prefix; every other unprefixed line continues the last one.
    r.kind = msg.find("RuntimeError: generate stream ended before producing any token") != std::string_view::npos
                 ? LogLineKind::ClientGenerateError
                 : LogLineKind::Continuation;
    r.message = std::string(msg.substr(0, kMaxMessage));
    return r;
  }
  r.message = std::string(msg.substr(0, kMaxMessage));
  classify(msg.substr(0, std::min(msg.size(), kMaxMessage)), r);
  return r;
}

}  // namespace kvscope
