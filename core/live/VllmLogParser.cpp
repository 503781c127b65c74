#include "core/live/VllmLogParser.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <string>

namespace kvscope {

namespace {

constexpr std::string_view kLevels[] = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Drops ANSI colour sequences (ESC [ ... m) at the front: vLLM colours its prefix and level on a tty.
std::string_view skipColour(std::string_view s) {
  while (s.size() >= 2 && s[0] == '\x1b' && s[1] == '[') {
    const auto m = s.find('m');
    if (m == std::string_view::npos) return s;
    s.remove_prefix(m + 1);
  }
  return s;
}

// `(NAME pid=N) `: the name and the rest of the line; false when the line has no such prefix.
bool processPrefix(std::string_view& s, std::string& name) {
  std::string_view t = skipColour(s);
  if (t.empty() || t[0] != '(') return false;
  const auto close = t.find(')');
  const auto pid = t.find(" pid=");
  if (close == std::string_view::npos || pid == std::string_view::npos || pid > close || close > 128) return false;
  if (close == pid + 5) return false;
  for (std::size_t i = pid + 5; i < close; ++i)
    if (!isDigit(t[i])) return false;
  name = std::string(t.substr(1, pid - 1));
  t = skipColour(t.substr(close + 1));  // on a tty the prefix is coloured: ")\x1b[0;0m "
  if (!t.starts_with(' ')) return false;
  s = skipColour(t.substr(1));
  return true;
}

int twoDigits(std::string_view s, std::size_t at) {
  if (at + 2 > s.size() || !isDigit(s[at]) || !isDigit(s[at + 1])) return -1;
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

// `LEVEL MM-DD HH:MM:SS ` then the location; false when the header is not there.
bool header(std::string_view& s, LogPrefix& p) {
  s = skipColour(s);
  std::string_view level;
  for (std::string_view l : kLevels)
    if (s.starts_with(l) && s.size() > l.size() && (s[l.size()] == ' ' || s[l.size()] == '\x1b')) level = l;
  if (level.empty()) return false;
  s.remove_prefix(level.size());
  s = skipColour(s);
  if (s.starts_with(' ')) s.remove_prefix(1);
  s = skipColour(s);
  // MM-DD HH:MM:SS
  if (s.size() < 15 || s[2] != '-' || s[5] != ' ' || s[8] != ':' || s[11] != ':') return false;
  const int month = twoDigits(s, 0), day = twoDigits(s, 3), hour = twoDigits(s, 6), minute = twoDigits(s, 9),
            second = twoDigits(s, 12);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60)
    return false;
  p.level = std::string(level);
  p.timestamp = std::string(s.substr(0, 14));
  using namespace std::chrono;
  const sys_days date{year{1970} / month / day};  // no year in the header: 1970, as a glog time
  p.clock_s = date.time_since_epoch().count() * 86400 + hour * 3600 + minute * 60 + second;
  p.has_time = true;
  p.has_year = false;
  s.remove_prefix(14);
  s = skipColour(s);
  if (s.starts_with(' ')) s.remove_prefix(1);
  // `[file.py:N] ` (or the oldest form `file.py:N] `); the location ends at "]", then a space
  // (coloured output closes its colour between them).
  if (s.starts_with('[')) s.remove_prefix(1);
  const auto close = s.find(']');
  if (close == std::string_view::npos || close > 256) return false;
  const std::string_view location = s.substr(0, close);
  const auto colon = location.rfind(':');
  if (colon == std::string_view::npos || location.find(' ') != std::string_view::npos) return false;
  for (std::size_t i = colon + 1; i < location.size(); ++i)
    if (!isDigit(location[i])) return false;
  s = skipColour(s.substr(close + 1));
  if (!s.starts_with(' ')) return false;
  s.remove_prefix(1);
  return true;
}

std::optional<double> parseNumber(std::string_view s) {
  std::string digits;  // "436,880": thousands separators as vLLM's "{:,}" prints them
  for (char c : s)
    if (c != ',') digits += c;
  double v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

// A scraped number as a count: logs are untrusted, and casting an out-of-range double is undefined.
std::int64_t asCount(double v) { return static_cast<std::int64_t>(std::clamp(v, -1.0, 1e15)); }

void malformed(LogRecord& r, std::string_view field, std::string_view value, std::string_view expected) {
  r.kind = LogLineKind::Malformed;
  r.problem = "field '" + std::string(field) + "': expected " + std::string(expected) + ", got '" +
              std::string(value.substr(0, 64)) + "'";
}

// The stats line's parts after its "Engine 000: " (or aggregated) head: "Key: value unit" joined by ", ".
void statsLine(std::string_view parts, LogRecord& r) {
  r.kind = LogLineKind::EngineStats;
  BatchGauges& b = r.batch;
  while (!parts.empty()) {
    const auto comma = parts.find(", ");
    std::string_view part = parts.substr(0, comma);
    parts = comma == std::string_view::npos ? std::string_view() : parts.substr(comma + 2);
    if (part.ends_with('.')) part.remove_suffix(1);  // V0's line ends with "%."
    const auto colon = part.find(": ");
    if (colon == std::string_view::npos) continue;
    const std::string_view key = part.substr(0, colon);
    std::string_view value = part.substr(colon + 2);
    for (std::string_view unit : {" tokens/s", " reqs", "%"})
      if (value.ends_with(unit)) value.remove_suffix(unit.size());
    const auto read = [&](const char* expected) {
      const auto v = parseNumber(value);
      if (!v) malformed(r, key, part.substr(colon + 2), expected);
      return v.value_or(-1);
    };
    if (key == "Avg prompt throughput")
      b.input_throughput = read("a number of tokens/s");
    else if (key == "Avg generation throughput")
      b.gen_throughput = read("a number of tokens/s");
    else if (key == "Running")
      b.running_req = asCount(read("a request count"));
    else if (key == "Waiting" || key == "Pending")
      b.queue_req = asCount(read("a request count"));
    else if (key == "Preemptions")
      b.preemptions = asCount(read("a count"));
    else if (key == "GPU KV cache usage")
      b.token_usage = read("a percentage") / 100;
    else if (key == "Prefix cache hit rate")
      b.cache_hit_rate = read("a percentage") / 100;
    else if (key == "External prefix cache hit rate")
      b.external_hit_rate = read("a percentage") / 100;
    if (r.kind == LogLineKind::Malformed) return;
  }
  // A stats line of every version has both: one cut short (a truncated write) is not one.
  if (b.running_req < 0) return malformed(r, "Running", "", "a request count in every stats line (missing)");
  if (b.token_usage < 0) return malformed(r, "GPU KV cache usage", "", "a percentage in every stats line (missing)");
}

// The first request id of "['a', 'b']", "{'a'}" or a bare id.
std::string firstId(std::string_view s) {
  while (!s.empty() && (s[0] == '[' || s[0] == '{' || s[0] == '\'' || s[0] == '"' || s[0] == ' ')) s.remove_prefix(1);
  std::size_t n = 0;
  while (n < s.size() && s[n] != '\'' && s[n] != '"' && s[n] != ',' && s[n] != ']' && s[n] != '}' && s[n] != ' ' &&
         s[n] != ':')
    ++n;
  return std::string(s.substr(0, n));
}

// HOST:PORT of "http://HOST:PORT[/...]".
std::string hostPort(std::string_view url) {
  if (const auto scheme = url.find("://"); scheme != std::string_view::npos) url.remove_prefix(scheme + 3);
  std::size_t n = 0;
  while (n < url.size() && url[n] != '/' && url[n] != ' ' && url[n] != ':') ++n;
  std::size_t end = n;
  if (end < url.size() && url[end] == ':') {
    ++end;
    while (end < url.size() && isDigit(url[end])) ++end;
  }
  return std::string(url.substr(0, end));
}

void transfer(LogRecord& r, char side, const char* stage, std::string rid, std::string_view exception) {
  r.kind = LogLineKind::TransferFailed;
  r.side = side;
  r.stage = stage;
  r.rid = std::move(rid);
  r.exception = std::string(exception);
}

// Each classifier below: true when the line is of its kind (then `r` says what it holds).

// The periodic stats line and the KV cache size of start-up.
bool classifyStats(std::string_view m, LogRecord& r) {
  // Stats: "Engine 000: ...", "2 Engines Aggregated: ...", V0 "Avg prompt throughput: ...".
  if (m.starts_with("Engine ") && m.size() > 12 && m.substr(10, 2) == ": " &&
      m.find("Avg prompt throughput") != std::string_view::npos) {
    const auto engine = parseNumber(m.substr(7, 3));
    if (!engine || *engine > 999) {
      malformed(r, "engine", m.substr(7, 3), "a 3-digit engine index");
      return true;
    }
    r.prefix.dp = static_cast<int>(*engine);
    statsLine(m.substr(12), r);
    return true;
  }
  if (const auto agg = m.find(" Engines Aggregated: "); agg != std::string_view::npos && agg < 8) {
    const auto n = parseNumber(m.substr(0, agg));
    if (!n || *n < 1 || *n > 1e6) {
      malformed(r, "engines", m.substr(0, agg), "a count of engines");
      return true;
    }
    r.engines_aggregated = static_cast<int>(*n);
    statsLine(m.substr(agg + 21), r);
    return true;
  }
  if (m.starts_with("Avg prompt throughput: ")) {
    statsLine(m, r);
    return true;
  }
  if (m.starts_with("GPU KV cache size: ") && m.ends_with(" tokens")) {
    const std::string_view n = m.substr(19, m.size() - 19 - 7);
    const auto v = parseNumber(n);
    if (!v) {
      malformed(r, "GPU KV cache size", n, "a number of tokens");
      return true;
    }
    r.kind = LogLineKind::KvCacheSize;
    r.batch.capacity_tokens = static_cast<std::int64_t>(std::min(*v, 1e15));
    return true;
  }
  return false;
}

// An engine or worker process died: EngineCore's own words (its traceback follows), the
// executor's and the client's (echoes of the same death when EngineCore spoke first).
bool classifyDeath(std::string_view m, LogRecord& r) {
  if (m.starts_with("EngineCore encountered a fatal error.") || m.starts_with("EngineCore failed to start.")) {
    r.kind = LogLineKind::SchedulerException;
    return true;
  }
  if ((m.starts_with("Engine core proc ") || m.starts_with("Worker proc ")) &&
      m.find(" died unexpectedly") != std::string_view::npos) {
    r.kind = LogLineKind::Sigquit;
    return true;
  }
  if (m.starts_with("AsyncLLM output_handler failed.")) {
    r.kind = LogLineKind::Sigquit;
    return true;
  }
  return false;
}

// Mooncake connector (vllm/distributed/kv_transfer/kv_connector/v1/mooncake*): failed handshakes
// and transfers, a request that timed out unsent, an unreachable bootstrap server.
bool classifyMooncake(std::string_view m, LogRecord& r) {
  const auto after = [&](std::string_view head) { return m.substr(head.size()); };
  if (m.starts_with("MooncakeAgentMetadata transfer failed for ")) {
    const std::string_view rest = after("MooncakeAgentMetadata transfer failed for ");
    const auto colon = rest.find("]: ");
    transfer(r, 'D', "handshake", firstId(rest), colon == std::string_view::npos ? rest : rest.substr(colon + 3));
    return true;
  }
  if (m.starts_with("Error happens during tranfering kvcache for ")) {  // upstream's spelling
    const std::string_view rest = after("Error happens during tranfering kvcache for ");
    const auto colon = rest.find(": ");
    transfer(r, 'D', "transfer", firstId(rest),
             colon == std::string_view::npos ? std::string_view("see logs in prefiller") : rest.substr(colon + 2));
    return true;
  }
  if (m.starts_with("pulling kv_caches for ")) {
    const std::string_view rest = after("pulling kv_caches for ");
    const auto failed = rest.find(" failed: ");
    if (failed == std::string_view::npos) return true;  // not a failure, and no other kind either
    transfer(r, 'D', "transfer", firstId(rest), rest.substr(failed + 9));
    return true;
  }
  if (m.starts_with("Error processing Mooncake handshake: ")) {
    transfer(r, 'P', "handshake", "", after("Error processing Mooncake handshake: "));
    return true;
  }
  if (m.starts_with("req ") && m.find(": local blocks(") != std::string_view::npos) {
    transfer(r, 'P', "transfer", firstId(after("req ")), m.substr(m.find(": ") + 2));
    return true;
  }
  if (m.starts_with("Request ") && m.find(" timed out after ") != std::string_view::npos &&
      m.find("without being sent") != std::string_view::npos) {
    r.kind = LogLineKind::KvPollTimeout;
    r.rid = firstId(after("Request "));
    const std::string_view rest = m.substr(m.find(" timed out after ") + 17);
    r.seconds = parseNumber(rest.substr(0, rest.find(' '))).value_or(-1);
    r.poll_state = "not sent";
    return true;
  }
  if (m.starts_with("Failed to connect to bootstrap server ") ||
      (m.starts_with("Failed to find remote engine_id ") &&
       m.find(" from bootstrap server ") != std::string_view::npos)) {
    r.kind = LogLineKind::BootstrapError;
    const auto server = m.find("bootstrap server ");
    r.remote = hostPort(m.substr(server + 17));
    return true;
  }
  return false;
}

// Aborts (async_llm.py): "Aborted request(s) a,b.", V0's "Aborted request a.", and per request.
bool classifyAbort(std::string_view m, LogRecord& r) {
  const auto after = [&](std::string_view head) { return m.substr(head.size()); };
  for (std::string_view head : {"Aborted request(s) ", "Aborted request "}) {
    if (!m.starts_with(head)) continue;
    r.kind = LogLineKind::Aborted;
    std::string_view ids = after(head);
    if (ids.ends_with('.')) ids.remove_suffix(1);
    r.rid = std::string(ids);  // comma-separated: one failed request each (LogEventMapper)
    return true;
  }
  if (m.starts_with("Request ") && (m.ends_with(" aborted.") || m.ends_with(" failed (engine dead)."))) {
    r.kind = LogLineKind::Aborted;
    r.rid = firstId(after("Request "));
    return true;
  }
  return false;
}

// The kinds are tried in this order: the first that recognises the line wins.
void classify(std::string_view m, LogRecord& r) {
  if (classifyStats(m, r) || classifyDeath(m, r) || classifyMooncake(m, r)) return;
  classifyAbort(m, r);
}

}  // namespace

std::optional<LogRecord> VllmLogParser::parse(std::string_view line) {
  LogRecord r;
  while (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') {
    r.prefix.continues = true;
    line.remove_suffix(1);
  }
  const bool from_process = processPrefix(line, r.prefix.process);
  std::string_view rest = line;
  if (!header(rest, r.prefix)) {
    if (!from_process) return std::nullopt;  // not vLLM's
    // A vLLM process' line without the logger's header (uvicorn's, print()): an unknown line.
    LogRecord plain;
    plain.prefix.process = std::move(r.prefix.process);
    plain.prefix.continues = r.prefix.continues;
    plain.message = std::string(line.substr(0, SchedulerLogParser::kMaxMessage));
    return plain;
  }
  r.prefix.present = true;
  r.message = std::string(rest.substr(0, SchedulerLogParser::kMaxMessage));
  classify(std::string_view(r.message), r);
  return r;
}

}  // namespace kvscope
