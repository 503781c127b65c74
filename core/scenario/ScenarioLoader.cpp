// Scenario and profile files: JSON with comments, validated field by field.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/InputFile.h"
#include "core/io/ResourceDir.h"
#include "core/knobs/KnobRegistry.h"
#include "core/model/Error.h"
#include "core/model/JsonKeys.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/scenario/Scenario.h"

namespace kvscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json readJsonFile(const std::string& path) {
  const std::string in = InputFile::readAll(path);
  try {
    return json::parse(in, rejectDuplicateKeys<json>(), /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw InputError(formatInputError(path, 0, "", std::string("invalid JSON: ") + e.what()));
  } catch (const DuplicateJsonKey& e) {
    throw InputError(formatInputError(path, 0, e.key(), "given twice in one object; say it once"));
  }
}

// A scenario's "profile": a bundled profile's name, or a path relative to the scenario file that
// stays below its folder ("../../../../etc/passwd" must not be read). Returns what
// HardwareProfile::load takes.
std::string profilePath(const std::string& scenario_file, const std::string& value) {
  if (value.find('/') == std::string::npos && value.find(".json") == std::string::npos) return value;  // a name
  const fs::path given(value);
  bool climbs = given.is_absolute();
  for (const auto& part : given) climbs = climbs || part == "..";
  if (climbs)
    throw InputError(formatInputError(scenario_file, 0, "profile",
                                      "'" + value +
                                          "' leaves the scenario's folder; give a bundled profile's name "
                                          "(h200, h20) or a path below the scenario file's folder"));
  return (fs::path(scenario_file).parent_path() / given).string();
}

// Field access that names the file and field on every mistake.
struct Fields {
  const std::string& file;
  const json& obj;
  std::string prefix;

  std::string path(const char* key) const { return prefix.empty() ? key : prefix + "." + key; }
  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(formatInputError(file, 0, path(key), what));
  }
  bool has(const char* key) const { return obj.contains(key); }
  double number(const char* key, double def, double lo, double hi) const {
    if (!has(key)) return def;
    const auto& v = obj[key];
    if (!v.is_number()) fail(key, "expected a number, got " + v.dump());
    const double d = v.get<double>();
    if (d < lo || d > hi)
      fail(key, "expected a value in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
    return d;
  }
  std::string text(const char* key, const std::string& def) const {
    if (!has(key)) return def;
    if (!obj[key].is_string()) fail(key, "expected a string, got " + obj[key].dump());
    return obj[key].get<std::string>();
  }
  bool boolean(const char* key, bool def) const {
    if (!has(key)) return def;
    if (!obj[key].is_boolean()) fail(key, "expected true or false, got " + obj[key].dump());
    return obj[key].get<bool>();
  }
  // Token counts and times: a distribution that can go below zero is a mistake in the file.
  Distribution dist(const char* key, const Distribution& def) const {
    if (!has(key)) return def;
    Distribution d;
    try {
      d = Distribution::fromJson(obj[key], path(key));
    } catch (const InputError& e) {
      throw InputError(formatInputError(file, 0, "", e.what()));
    }
    const bool negative = (d.kind != Distribution::Kind::LogNormal && d.a < 0) || d.max < 0;
    if (negative) fail(key, "expected a distribution of values >= 0, got " + obj[key].dump());
    d.min = std::max(d.min, 0.0);
    return d;
  }
  Fields sub(const char* key) const {
    if (!has(key)) return Fields{file, kEmpty, path(key)};
    if (!obj[key].is_object()) fail(key, "expected an object");
    return Fields{file, obj[key], path(key)};
  }
  static inline const json kEmpty = json::object();
};

void checkKeys(const Fields& f, std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : f.obj.items()) {
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw InputError(formatInputError(f.file, 0, f.path(key.c_str()), "unknown field; expected one of: " + list));
    }
  }
}

// The "cluster" object: how many prefill and decode workers, disaggregated or not.
void readCluster(Scenario& s, const Fields& f) {
  const Fields cluster = f.sub("cluster");
  checkKeys(cluster, {"prefill", "decode", "disaggregated", "connector", "consumer_crash_kv_fraction"});
  s.disaggregated = cluster.boolean("disaggregated", true);
  const std::string connector = cluster.text("connector", "sglang");
  if (connector == "sglang")
    s.connector = Connector::Sglang;
  else if (connector == "vllm")
    s.connector = Connector::Vllm;
  else
    cluster.fail("connector", "expected \"sglang\" or \"vllm\", got \"" + connector + "\"");
  s.consumer_crash_kv_fraction = cluster.number("consumer_crash_kv_fraction", 0, 0, 1);
  if (s.connector == Connector::Vllm && !s.disaggregated)
    cluster.fail("connector", "names how P hands a turn to D: only for a disaggregated cluster");
  s.prefill_workers = static_cast<int>(cluster.number("prefill", s.disaggregated ? 1 : 0, 0, kMaxPrefillWorkers));
  s.decode_workers = static_cast<int>(cluster.number("decode", 3, 1, kMaxWorkers));
  if (s.disaggregated && s.prefill_workers < 1)
    cluster.fail("prefill", "a disaggregated cluster needs at least 1 prefill worker");
}

// "eviction" (what the KV cache frees: whole sessions or blocks) and "correction_fault" (what a
// streaming-session correction does).
void readEvictionAndFault(Scenario& s, const Fields& f) {
  const std::string eviction = f.text("eviction", "session");
  if (eviction == "session")
    s.eviction = EvictionGranularity::Session;
  else if (eviction == "block")
    s.eviction = EvictionGranularity::Block;
  else
    f.fail("eviction", "expected \"session\" or \"block\", got \"" + eviction + "\"");
  const std::string fault = f.text("correction_fault", "drop");
  if (fault == "crash")
    s.correction_fault = CorrectionFault::Crash;
  else if (fault == "drop")
    s.correction_fault = CorrectionFault::Drop;
  else if (fault == "none")
    s.correction_fault = CorrectionFault::None;
  else
    f.fail("correction_fault", "expected \"crash\", \"drop\" or \"none\", got \"" + fault + "\"");
}

// The scenario's knob values, each checked as the knob registry would apply it.
void readKnobs(Scenario& s, const Fields& f) {
  const Fields knobs = f.sub("knobs");
  for (const auto& [key, value] : knobs.obj.items()) {
    if (!value.is_number()) knobs.fail(key.c_str(), "expected a number, got " + value.dump());
    s.knobs[key] = value.get<double>();
  }
  KnobRegistry check;
  for (const auto& [key, value] : s.knobs) {
    const auto r = check.apply({{key, value}}, "scenario");
    if (!r.ok) knobs.fail(key.c_str(), r.error);
  }
}

// A synthetic workload's generator settings.
void readSynthetic(SyntheticAgenticSpec& g, const Fields& w) {
  g.sessions = static_cast<int>(w.number("sessions", g.sessions, 1, 1e6));
  g.start_window_s = w.number("start_window_s", g.start_window_s, 0, 1e7);
  g.boilerplate_tokens = w.dist("boilerplate_tokens", g.boilerplate_tokens);
  g.first_turn_tokens = w.dist("first_turn_tokens", g.first_turn_tokens);
  g.turns = w.dist("turns", g.turns);
  g.new_tokens = w.dist("new_tokens", g.new_tokens);
  g.output_tokens = w.dist("output_tokens", g.output_tokens);
  g.think_s = w.dist("think_s", g.think_s);
  g.zero_think_probability = w.number("zero_think_probability", 0, 0, 1);
  g.max_context_tokens = static_cast<std::int64_t>(w.number("max_context_tokens", 200000, 1, 1e8));
  const std::string arrivals = w.text("arrivals", "spread");
  if (arrivals == "poisson")
    g.arrivals = SyntheticAgenticSpec::Arrivals::Poisson;
  else if (arrivals != "spread")
    w.fail("arrivals", "expected \"spread\" or \"poisson\", got \"" + arrivals + "\"");
  g.single_turn_share = w.number("single_turn_share", 0, 0, 1);
  g.boilerplate_variants = static_cast<int>(w.number("boilerplate_variants", 1, 1, 1e6));
}

// The "workload" object: its dispatch and limits, then a synthetic generator's or a trace's settings.
void readWorkload(Scenario& s, const Fields& f, const std::string& path) {
  const Fields w = f.sub("workload");
  checkKeys(w, {"kind",
                "trace",
                "lenient",
                "replay",
                "dispatch",
                "max_inflight_sessions",
                "max_inflight_requests",
                "warm_start_policy",
                "wall_deadline_s",
                "time_scale",
                "session_start_window_s",
                "max_sessions",
                "sessions",
                "start_window_s",
                "boilerplate_tokens",
                "first_turn_tokens",
                "turns",
                "new_tokens",
                "output_tokens",
                "think_s",
                "zero_think_probability",
                "max_context_tokens",
                "arrivals",
                "single_turn_share",
                "boilerplate_variants"});
  const std::string kind = w.text("kind", "synthetic");
  // `replay` (open or closed) is the older name of `dispatch`.
  const bool has_dispatch = w.has("dispatch");
  if (has_dispatch && w.has("replay")) w.fail("replay", "give `dispatch` or its older name `replay`, not both");
  const char* dispatch_key = has_dispatch ? "dispatch" : "replay";
  const std::string dispatch = w.text(dispatch_key, "closed");
  if (auto d = parseDispatch(dispatch); d && (has_dispatch || *d == Dispatch::Open || *d == Dispatch::Closed))
    s.workload.dispatch = *d;
  else
    w.fail(dispatch_key, std::string("expected ") + (has_dispatch ? kDispatchNames : "\"open\" or \"closed\"") +
                             ", got \"" + dispatch + "\"");
  s.workload.max_inflight_sessions = static_cast<long>(w.number("max_inflight_sessions", 0, 0, 1e9));
  if (s.workload.max_inflight_sessions > 0 && s.workload.dispatch == Dispatch::Open)
    w.fail("max_inflight_sessions",
           "caps sessions, whose turns the open dispatch does not sequence: use closed, "
           "tracets, thinktime or burst");
  s.workload.max_inflight_requests = static_cast<long>(w.number("max_inflight_requests", 0, 0, 1e9));
  s.workload.warm_start_policy = w.text("warm_start_policy", "");
  if (!s.workload.warm_start_policy.empty() && !makePolicy(s.workload.warm_start_policy))
    w.fail("warm_start_policy",
           "unknown policy \"" + s.workload.warm_start_policy + "\"; expected one of: " + policyNameList());
  s.workload.wall_deadline_s = w.number("wall_deadline_s", 0, 0, 30 * 86400.0);
  s.workload.time_scale = w.number("time_scale", 1.0, 1e-6, 1e6);
  if (kind == "synthetic") {
    readSynthetic(s.workload.synthetic, w);
  } else if (kind == "trace") {
    s.workload.kind = WorkloadSpec::Kind::Trace;
    std::string trace = w.text("trace", "");
    if (trace.empty()) w.fail("trace", "a trace workload needs a \"trace\" path");
    if (fs::path(trace).is_relative()) trace = (fs::path(path).parent_path() / trace).lexically_normal().string();
    s.workload.trace_path = trace;
    s.workload.lenient = w.boolean("lenient", false);
    s.workload.session_start_window_s = w.number("session_start_window_s", 0, 0, 1e7);
    s.workload.max_sessions = static_cast<long>(w.number("max_sessions", 0, 0, 1e9));
  } else {
    w.fail("kind", "expected \"synthetic\" or \"trace\", got \"" + kind + "\"");
  }
}

}  // namespace

std::string Scenario::scenarioDir() {
  if (const char* env = std::getenv("KVSCOPE_SCENARIO_DIR"); env && *env) return env;
  return resourcePath("scenarios");
}

std::vector<std::string> Scenario::bundledNames() {
  std::vector<std::string> names;
  if (!std::getenv("KVSCOPE_SCENARIO_DIR") && resourceDir().empty()) return names;  // load() says where it looked
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(scenarioDir(), ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

HardwareProfile HardwareProfile::load(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (path.find('/') == std::string::npos && path.find(".json") == std::string::npos)
    path = (fs::path(Scenario::scenarioDir()).parent_path() / "profiles" / (name_or_path + ".json")).string();
  if (!fs::exists(path))
    throw InputError(formatInputError(path, 0, "profile", "no such hardware profile (bundled: h200, h20)"));
  const json j = readJsonFile(path);
  if (!j.is_object()) throw InputError(formatInputError(path, 0, "", "expected a JSON object"));
  Fields f{path, j, ""};
  // Every constant must be stated (with its source, in a comment): a typo must not silently fall
  // back to a default and change the run.
  static constexpr const char* kKeys[] = {"name",
                                          "kv_bytes_per_token",
                                          "decode_kv_pool_tokens",
                                          "prefill_kv_pool_tokens",
                                          "prefill_tokens_per_s",
                                          "prefill_overhead_s",
                                          "prefill_per_context_token_s",
                                          "decode_iteration_base_s",
                                          "decode_iteration_per_request_s",
                                          "decode_iteration_per_context_token_s",
                                          "chunked_prefill_tokens",
                                          "max_running_requests",
                                          "link_bandwidth_bytes_per_s",
                                          "link_probe_interval_s",
                                          "admission_rpc_s",
                                          "worker_restart_s"};
  // "calibration": what `kvscope-cli calibrate profile` fitted and how well (read by people, not here).
  for (const auto& [key, value] : j.items()) {
    if (key == "calibration") {
      if (!value.is_object()) f.fail("calibration", "expected an object (written by `kvscope-cli calibrate profile`)");
      continue;
    }
    // "model": the served model and how the pool sizes follow from it (`kvscope-cli calibrate model`).
    if (key == "model") {
      if (!value.is_object()) f.fail("model", "expected an object: the served model and where the numbers come from");
      continue;
    }
    if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }))
      f.fail(key.c_str(), "unknown profile constant");
  }
  for (const char* key : kKeys)
    if (!j.contains(key)) f.fail(key, "missing: a profile states every constant");
  HardwareProfile p;
  p.name = f.text("name", name_or_path);
  p.kv_bytes_per_token = f.number("kv_bytes_per_token", p.kv_bytes_per_token, 1, 1e9);
  p.decode_kv_pool_tokens = static_cast<long>(f.number("decode_kv_pool_tokens", p.decode_kv_pool_tokens, 1000, 1e10));
  p.prefill_kv_pool_tokens =
      static_cast<long>(f.number("prefill_kv_pool_tokens", p.prefill_kv_pool_tokens, 1000, 1e10));
  p.prefill_tokens_per_s = f.number("prefill_tokens_per_s", p.prefill_tokens_per_s, 1, 1e9);
  p.prefill_overhead_s = f.number("prefill_overhead_s", p.prefill_overhead_s, 0, 60);
  p.prefill_per_context_token_s = f.number("prefill_per_context_token_s", p.prefill_per_context_token_s, 0, 1e-3);
  p.decode_iteration_base_s = f.number("decode_iteration_base_s", p.decode_iteration_base_s, 1e-6, 10);
  p.decode_iteration_per_request_s =
      f.number("decode_iteration_per_request_s", p.decode_iteration_per_request_s, 0, 10);
  p.decode_iteration_per_context_token_s =
      f.number("decode_iteration_per_context_token_s", p.decode_iteration_per_context_token_s, 0, 1);
  p.chunked_prefill_tokens = static_cast<long>(f.number("chunked_prefill_tokens", p.chunked_prefill_tokens, 1, 1e7));
  p.max_running_requests = static_cast<long>(f.number("max_running_requests", p.max_running_requests, 1, 1e6));
  p.link_bandwidth_bytes_per_s = f.number("link_bandwidth_bytes_per_s", p.link_bandwidth_bytes_per_s, 1e3, 1e13);
  p.link_probe_interval_s = f.number("link_probe_interval_s", p.link_probe_interval_s, 0.001, 3600);
  p.admission_rpc_s = f.number("admission_rpc_s", p.admission_rpc_s, 0, 10);
  p.worker_restart_s = f.number("worker_restart_s", p.worker_restart_s, 0, 86400);
  return p;
}

nlohmann::ordered_json HardwareProfile::toJson() const {
  nlohmann::ordered_json j;
  j["name"] = name;
  j["kv_bytes_per_token"] = kv_bytes_per_token;
  j["decode_kv_pool_tokens"] = decode_kv_pool_tokens;
  j["prefill_kv_pool_tokens"] = prefill_kv_pool_tokens;
  j["prefill_tokens_per_s"] = prefill_tokens_per_s;
  j["prefill_overhead_s"] = prefill_overhead_s;
  j["prefill_per_context_token_s"] = prefill_per_context_token_s;
  j["decode_iteration_base_s"] = decode_iteration_base_s;
  j["decode_iteration_per_request_s"] = decode_iteration_per_request_s;
  j["decode_iteration_per_context_token_s"] = decode_iteration_per_context_token_s;
  j["chunked_prefill_tokens"] = chunked_prefill_tokens;
  j["max_running_requests"] = max_running_requests;
  j["link_bandwidth_bytes_per_s"] = link_bandwidth_bytes_per_s;
  j["link_probe_interval_s"] = link_probe_interval_s;
  j["admission_rpc_s"] = admission_rpc_s;
  j["worker_restart_s"] = worker_restart_s;
  return j;
}

std::string Scenario::resolve(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (!fs::exists(path) && path.find('/') == std::string::npos) {
    const std::string bundled = (fs::path(scenarioDir()) / (name_or_path + ".json")).string();
    if (fs::exists(bundled)) path = bundled;
  }
  if (!fs::exists(path)) {
    std::string names;
    for (const auto& n : bundledNames()) names += (names.empty() ? "" : ", ") + n;
    throw InputError("unknown scenario '" + name_or_path + "': not a file and not a bundled scenario (" + names + ")");
  }
  return path;
}

nlohmann::json Scenario::readJson(const std::string& path) { return readJsonFile(path); }

Scenario Scenario::load(const std::string& name_or_path) {
  const std::string path = resolve(name_or_path);
  return fromJson(readJsonFile(path), path);
}

Scenario Scenario::fromJson(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) throw InputError(formatInputError(path, 0, "", "expected a JSON object"));
  Fields f{path, j, ""};
  // "calibration": what `kvscope-cli calibrate fit` fitted this scenario to (its target, values and
  // errors). A record for the reader; nothing in it changes the run.
  checkKeys(f, {"name", "description", "profile", "cluster", "block_size", "eviction", "correction_fault", "policy",
                "knobs", "duration_s", "seed", "snapshot_interval_s", "workload", "calibration"});
  if (f.has("calibration") && !j["calibration"].is_object()) f.fail("calibration", "expected an object");
  Scenario s;
  s.file = path;
  s.name = f.text("name", fs::path(path).stem().string());
  s.description = f.text("description", "");
  s.profile = HardwareProfile::load(profilePath(path, f.text("profile", "h200")));

  readCluster(s, f);

  s.block_size = static_cast<int>(f.number("block_size", 24, 1, 4096));
  readEvictionAndFault(s, f);

  s.policy = f.text("policy", s.policy);
  if (!makePolicy(s.policy)) {
    f.fail("policy", "unknown policy \"" + s.policy + "\"; expected one of: " + policyNameList());
  }
  if (f.has("knobs")) readKnobs(s, f);

  s.duration_s = f.number("duration_s", s.duration_s, 1, 30 * 86400.0);
  s.seed = static_cast<std::uint64_t>(f.number("seed", 1, 0, 9007199254740992.0));
  s.snapshot_interval_s = f.number("snapshot_interval_s", 1.0, 0.01, 3600);

  readWorkload(s, f, path);
  return s;
}

const char* toString(Dispatch d) {
  switch (d) {
    case Dispatch::Open:
      return "open";
    case Dispatch::Closed:
      return "closed";
    case Dispatch::TraceTs:
      return "tracets";
    case Dispatch::ThinkTime:
      return "thinktime";
    case Dispatch::Burst:
      return "burst";
  }
  return "closed";
}

std::optional<Dispatch> parseDispatch(std::string_view text) {
  for (Dispatch d : {Dispatch::Open, Dispatch::Closed, Dispatch::TraceTs, Dispatch::ThinkTime, Dispatch::Burst})
    if (text == toString(d)) return d;
  return std::nullopt;
}

}  // namespace kvscope
