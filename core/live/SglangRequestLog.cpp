#include "core/live/SglangRequestLog.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/live/SchedulerLogPrefix.h"

namespace kvscope {

namespace {

constexpr std::string_view kFinish = "Finish: obj=";
constexpr std::string_view kMetaInfo = "'meta_info': {";

// The value after `'key': ` in a Python dict repr, up to the next ',' or '}' ("" when absent). Keys
// are matched after "{" or ", " only, so 'cached_tokens' is not found inside 'cached_tokens_details'.
std::optional<std::string_view> dictValue(std::string_view dict, std::string_view key) {
  const std::string needle = "'" + std::string(key) + "': ";
  for (std::size_t at = dict.find(needle); at != std::string_view::npos; at = dict.find(needle, at + 1)) {
    if (at > 0 && dict[at - 1] != '{' && !(at > 1 && dict[at - 1] == ' ' && dict[at - 2] == ',')) continue;
    std::string_view v = dict.substr(at + needle.size());
    return v.substr(0, v.find_first_of(",}"));
  }
  return std::nullopt;
}

// A field of the obj repr: `name=value` after "(" or ", ", up to the next ", " or ")".
std::optional<std::string_view> objField(std::string_view obj, std::string_view name) {
  const std::string needle = std::string(name) + "=";
  for (std::size_t at = obj.find(needle); at != std::string_view::npos; at = obj.find(needle, at + 1)) {
    if (at > 0 && obj[at - 1] != '(' && !(at > 1 && obj[at - 1] == ' ' && obj[at - 2] == ',')) continue;
    std::string_view v = obj.substr(at + needle.size());
    if (!v.empty() && v.front() == '\'') {  // a string: to its closing quote
      const std::size_t close = v.find('\'', 1);
      return close == std::string_view::npos ? std::string_view{} : v.substr(1, close - 1);
    }
    return v.substr(0, v.find_first_of(",)"));
  }
  return std::nullopt;
}

std::string_view unquoted(std::string_view v) {
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front())
    return v.substr(1, v.size() - 2);
  return v;
}

bool toNumber(std::string_view v, double& out) {
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && end == v.data() + v.size() && std::isfinite(out);
}

bool toCount(std::string_view v, std::int64_t& out) {
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && end == v.data() + v.size() && out >= 0;
}

// Sizes, latency and TTFT from a meta_info's values however they were read (text or JSON);
// false with r Malformed when a field every finished request has is missing or wrong.
struct Meta {
  std::optional<std::string_view> prompt, completion, cached, e2e, throughput;
};
// A JSON id or name as text: a string as it is, a whole number in decimal, anything else "".
std::string text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  return {};
}

bool readMeta(const Meta& m, LogRecord& r) {
  const auto fail = [&](const char* field, std::optional<std::string_view> v, const char* expected) {
    r.kind = LogLineKind::Malformed;
    r.problem = std::string("field 'meta_info.") + field + "': expected " + expected + ", got " +
                (v ? "'" + std::string(v->substr(0, 40)) + "'" : std::string("nothing"));
    return false;
  };
  if (!m.prompt || !toCount(*m.prompt, r.prompt_tokens)) return fail("prompt_tokens", m.prompt, "a token count");
  if (!m.completion || !toCount(*m.completion, r.completion_tokens))
    return fail("completion_tokens", m.completion, "a token count");
  if (!m.e2e || !toNumber(*m.e2e, r.e2e_s) || r.e2e_s < 0) return fail("e2e_latency", m.e2e, "seconds >= 0");
  // cached_tokens is in every version we know of; an old build without it reports "not known".
  if (m.cached && *m.cached != "None" && !toCount(*m.cached, r.cached_tokens))
    return fail("cached_tokens", m.cached, "a token count");
  double throughput = 0;
  if (m.throughput && r.completion_tokens > 1 && toNumber(*m.throughput, throughput) && throughput > 0)
    r.ttft_s = std::max(0.0, r.e2e_s - static_cast<double>(r.completion_tokens - 1) / throughput);
  r.kind = LogLineKind::RequestFinished;
  return true;
}

}  // namespace

bool SglangRequestLog::parseText(std::string_view message, LogRecord& r) {
  if (!message.starts_with(kFinish)) return false;
  r.message = std::string(message.substr(0, SchedulerLogParser::kMaxMessage));
  const std::size_t meta_at = message.rfind(kMetaInfo);
  if (meta_at == std::string_view::npos) {
    r.kind = LogLineKind::Malformed;
    r.problem = "field 'out.meta_info': expected the finished request's meta_info, got nothing";
    return true;
  }
  const std::string_view obj = message.substr(kFinish.size(), meta_at - kFinish.size());
  const std::string_view meta = message.substr(meta_at + kMetaInfo.size() - 1);
  if (const auto rid = objField(obj, "rid")) r.rid = std::string(*rid);
  if (r.rid.empty())
    if (const auto id = dictValue(meta, "id")) r.rid = std::string(unquoted(*id));
  if (const auto room = objField(obj, "bootstrap_room"); room && *room != "None") r.bootstrap_room = std::string(*room);
  if (const auto host = objField(obj, "bootstrap_host"); host && *host != "None") r.bootstrap_host = std::string(*host);
  // The session, where the client named one: SGLang's session_params {'id': ...}, else the
  // conversation or routing key.
  if (const std::size_t sp = obj.find("session_params={"); sp != std::string_view::npos) {
    const std::string_view params = obj.substr(sp + 15);
    if (const auto id = dictValue(params.substr(0, params.find('}') + 1), "id"); id && *id != "None")
      r.session_id = std::string(unquoted(*id));
  }
  for (const char* key : {"conversation_id", "routing_key"})
    if (r.session_id.empty())
      if (const auto v = objField(obj, key); v && !v->empty() && *v != "None") r.session_id = std::string(*v);
  if (const std::size_t fr = meta.find("'finish_reason': {'type': '"); fr != std::string_view::npos) {
    const std::string_view t = meta.substr(fr + 27);
    r.finish_type = std::string(t.substr(0, t.find('\'')));
  }
  readMeta({dictValue(meta, "prompt_tokens"), dictValue(meta, "completion_tokens"), dictValue(meta, "cached_tokens"),
            dictValue(meta, "e2e_latency"), dictValue(meta, "decode_throughput")},
           r);
  return true;
}

bool SglangRequestLog::parseJson(std::string_view line, LogRecord& r) {
  if (!line.starts_with("{") || line.find("\"request.finished\"") == std::string_view::npos) return false;
  const nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("event") || text(j["event"]) != "request.finished") return false;
  r.message = std::string(line.substr(0, SchedulerLogParser::kMaxMessage));
  // "2026-05-20T08:02:44.565321" (local, naive) read as the scheduler prefix's time.
  const std::string ts = j.contains("timestamp") ? text(j["timestamp"]) : std::string();
  if (ts.size() >= 19 && ts[10] == 'T') {
    std::string as_prefix = "[" + ts.substr(0, 10) + " " + ts.substr(11, 8);
    if (ts.size() >= 23 && ts[19] == '.') as_prefix += ts.substr(19, 4);
    as_prefix += "] ";
    std::string_view rest;
    SchedulerLogPrefix::parse(as_prefix, r.prefix, rest);
  }
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& obj = j.contains("obj") && j["obj"].is_object() ? j["obj"] : empty;
  const nlohmann::json& out = j.contains("out") && j["out"].is_object() ? j["out"] : empty;
  const nlohmann::json& meta = out.contains("meta_info") && out["meta_info"].is_object() ? out["meta_info"] : empty;
  r.rid = j.contains("rid") ? text(j["rid"]) : std::string();
  if (r.rid.empty() && obj.contains("rid")) r.rid = text(obj["rid"]);
  if (obj.contains("bootstrap_room")) r.bootstrap_room = text(obj["bootstrap_room"]);
  if (obj.contains("bootstrap_host")) r.bootstrap_host = text(obj["bootstrap_host"]);
  if (obj.contains("session_params") && obj["session_params"].is_object() && obj["session_params"].contains("id"))
    r.session_id = text(obj["session_params"]["id"]);
  for (const char* key : {"conversation_id", "routing_key"})
    if (r.session_id.empty() && obj.contains(key)) r.session_id = text(obj[key]);
  if (meta.contains("finish_reason") && meta["finish_reason"].is_object())
    r.finish_type = text(meta["finish_reason"].value("type", nlohmann::json()));
  // The values as text, so that text and JSON lines are checked alike.
  std::string values[5];
  const char* keys[5] = {"prompt_tokens", "completion_tokens", "cached_tokens", "e2e_latency", "decode_throughput"};
  Meta m;
  std::optional<std::string_view>* slots[5] = {&m.prompt, &m.completion, &m.cached, &m.e2e, &m.throughput};
  for (int i = 0; i < 5; ++i)
    if (meta.contains(keys[i]) && !meta[keys[i]].is_null()) {
      values[i] = meta[keys[i]].is_string() ? meta[keys[i]].get<std::string>() : meta[keys[i]].dump();
      *slots[i] = values[i];
    }
  readMeta(m, r);
  return true;
}

}  // namespace kvscope
