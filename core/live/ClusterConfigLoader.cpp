#include "core/live/ClusterConfigLoader.h"
#include "core/io/InputFile.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "core/knobs/KnobRegistry.h"
#include "core/model/Error.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"

namespace kvscope {

namespace {

// What is wrong with a worker's /metrics URL ("" when nothing): http, a host (an IPv6 one in
// brackets, closed), an optional port 1..65535, then the path.
std::string metricsUrlProblem(const std::string& url) {
  if (url.rfind("http://", 0) != 0) return "not http://";
  const std::string rest = url.substr(7);
  const std::string authority = rest.substr(0, rest.find('/'));
  std::string host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) return "an IPv6 host's '[' is not closed";
    host = authority.substr(0, close + 1);
    const std::string after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return "text after the IPv6 host";
    if (!after.empty()) port = after.substr(1);
    if (host.size() <= 2) return "no host";
  } else if (const auto colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (host.find(':') != std::string::npos) return "an IPv6 host needs brackets";
  }
  if (host.empty()) return "no host";
  if (authority.find(':') != std::string::npos && port.empty()) return "an empty port";
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return "the port is not a number";
    const long p = std::stol(port);
    if (p < 1 || p > 65535) return "the port is not in 1..65535";
  }
  return "";
}

namespace fs = std::filesystem;

struct Node {
  const std::string& file;
  YAML::Node node;
  std::string path;  // "workers[1].role"

  long line() const { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(formatInputError(file, line(), path, what));
  }
  std::string shown() const {
    if (node.IsScalar()) return quotedExcerpt(node.Scalar());
    return node.IsSequence() ? "a list" : node.IsMap() ? "a mapping" : "nothing";
  }
  Node child(const std::string& key) const { return {file, node[key], path.empty() ? key : path + "." + key}; }
  Node item(std::size_t i) const { return {file, node[i], path + "[" + std::to_string(i) + "]"}; }

  void onlyKeys(std::initializer_list<const char*> keys) const {
    if (!node.IsMap()) fail("expected a mapping, got " + shown());
    const std::set<std::string> known(keys.begin(), keys.end());
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      if (known.count(key)) continue;
      std::string list;
      for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
      const std::string where = path.empty() ? key : path + "." + key;
      throw InputError(formatInputError(file, kv.first.Mark().line + 1, where, "unknown key; expected one of " + list));
    }
  }
  std::string text() const {
    if (!node.IsScalar() || node.Scalar().empty()) fail("expected a text, got " + shown());
    return node.Scalar();
  }
  double number(double lo, double hi) const {
    double v = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, v) || !(v >= lo && v <= hi))
      fail("expected a number in [" + trimmed(lo) + ", " + trimmed(hi) + "], got " + shown());
    return v;
  }
  bool boolean() const {
    bool v = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) fail("expected true or false, got " + shown());
    return v;
  }
  std::vector<std::string> texts() const {  // a text or a list of texts
    if (node.IsScalar()) return {text()};
    if (!node.IsSequence()) fail("expected a file name or a list of them, got " + shown());
    std::vector<std::string> out;
    for (std::size_t i = 0; i < node.size(); ++i) out.push_back(item(i).text());
    return out;
  }
  static std::string trimmed(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  }
};

std::string resolve(const std::string& file, const std::string& path) {
  const fs::path p(path);
  if (p.is_absolute()) return path;
  return (fs::path(file).parent_path() / p).lexically_normal().string();
}

void checkAddress(const Node& n, const std::string& value) {
  const auto colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == value.size())
    n.fail("expected HOST:PORT, got '" + value + "'");
  for (std::size_t i = colon + 1; i < value.size(); ++i)
    if (value[i] < '0' || value[i] > '9') n.fail("expected HOST:PORT with a numeric port, got '" + value + "'");
}

void checkZmqEndpoint(const Node& n, const std::string& value) {
  if (kvEventEndpointProblem(value).empty()) return;
  n.fail("expected tcp://HOST:PORT or ipc://PATH (the engine's KV event socket), got '" + value + "'");
}

KvEventEndpoint kvEventEndpoint(const Node& n) {
  n.onlyKeys({"endpoint", "replay", "topic"});
  if (!n.node["endpoint"]) n.fail("expected an 'endpoint' (tcp://HOST:PORT, the engine's --kv-events-config endpoint)");
  KvEventEndpoint e;
  e.endpoint = n.child("endpoint").text();
  checkZmqEndpoint(n.child("endpoint"), e.endpoint);
  if (n.node["replay"]) {
    e.replay = n.child("replay").text();
    checkZmqEndpoint(n.child("replay"), e.replay);
  }
  if (n.node["topic"]) e.topic = n.child("topic").text();
  return e;
}

LiveWorkerConfig worker(const Node& n, const std::string& file) {
  n.onlyKeys({"id", "role", "engine", "metrics", "logs", "mooncake_logs", "metrics_scrapes", "bootstrap", "mooncake",
              "kv_capacity_tokens", "kv_events"});
  LiveWorkerConfig w;
  w.line = n.line();
  if (!n.node["id"]) n.fail("expected an 'id' (e.g. D0)");
  w.id = n.child("id").text();
  if (!n.node["role"]) n.fail("expected a 'role' (prefill, decode or unified)");
  const Node role = n.child("role");
  const std::string r = role.text();
  if (r == "prefill")
    w.role = WorkerRole::Prefill;
  else if (r == "decode")
    w.role = WorkerRole::Decode;
  else if (r == "unified")
    w.role = WorkerRole::Unified;
  else
    role.fail("expected prefill, decode or unified, got '" + r + "'");
  if (n.node["engine"]) {
    const Node e = n.child("engine");
    const std::string engine = e.text();
    if (engine == "sglang")
      w.engine = EngineKind::Sglang;
    else if (engine == "vllm")
      w.engine = EngineKind::Vllm;
    else
      e.fail("expected sglang or vllm, got '" + engine + "'");
  }
  if (n.node["metrics"]) {
    const Node m = n.child("metrics");
    w.metrics_url = m.text();
    if (const std::string why = metricsUrlProblem(w.metrics_url); !why.empty())
      m.fail("expected an http://HOST:PORT/metrics URL, got '" + w.metrics_url + "' (" + why + ")");
  }
  if (n.node["logs"])
    for (auto& l : n.child("logs").texts()) w.logs.push_back(resolve(file, l));
  if (n.node["mooncake_logs"])
    for (auto& l : n.child("mooncake_logs").texts()) w.mooncake_logs.push_back(resolve(file, l));
  if (n.node["metrics_scrapes"])
    for (auto& l : n.child("metrics_scrapes").texts()) w.metrics_scrapes.push_back(resolve(file, l));
  if (n.node["bootstrap"]) {
    const Node b = n.child("bootstrap");
    if (w.role != WorkerRole::Prefill) b.fail("expected only on a prefill worker (decode logs name P by it)");
    w.bootstrap_address = b.text();
    checkAddress(b, w.bootstrap_address);
  }
  if (n.node["mooncake"]) {
    const Node m = n.child("mooncake");
    if (w.role == WorkerRole::Prefill) m.fail("expected only on a decode worker (prefill logs name D by it)");
    w.mooncake_address = m.text();
    checkAddress(m, w.mooncake_address);
  }
  if (n.node["kv_capacity_tokens"])
    w.kv_capacity_tokens = static_cast<std::int64_t>(n.child("kv_capacity_tokens").number(0, 1e12));
  if (n.node["kv_events"]) {
    // One endpoint (a mapping) or one per data-parallel rank (a list of them).
    const Node k = n.child("kv_events");
    if (k.node.IsSequence())
      for (std::size_t i = 0; i < k.node.size(); ++i) w.kv_events.push_back(kvEventEndpoint(k.item(i)));
    else
      w.kv_events.push_back(kvEventEndpoint(k));
  }
  if (w.metrics_url.empty() && w.logs.empty() && w.mooncake_logs.empty() && w.metrics_scrapes.empty() &&
      w.kv_events.empty())
    n.fail(
        "expected 'metrics' or 'logs' (or 'mooncake_logs', 'metrics_scrapes', 'kv_events'): otherwise nothing is "
        "watched on " +
        w.id);
  return w;
}

LiveRouterConfig routerSection(const Node& n) {
  if (n.node.IsNull()) return {};  // `router:` alone: the defaults
  n.onlyKeys({"policy", "block_size", "knobs"});
  LiveRouterConfig r;
  if (n.node["policy"]) {
    const Node p = n.child("policy");
    r.policy = p.text();
    if (!makePolicy(r.policy)) {
      p.fail("expected a policy (" + policyNameList() + "), got '" + r.policy + "'");
    }
  }
  if (n.node["block_size"]) r.block_size = static_cast<int>(n.child("block_size").number(1, 1 << 20));
  if (n.node["knobs"]) {
    const Node k = n.child("knobs");
    if (!k.node.IsMap()) k.fail("expected a mapping of knob: value, got " + k.shown());
    for (const auto& kv : k.node) {
      const std::string name = kv.first.Scalar();
      const Node value = k.child(name);
      r.knobs[name] = value.number(-1e300, 1e300);
      KnobRegistry check;
      if (const auto result = check.apply({{name, r.knobs[name]}}, "cluster"); !result.ok)
        value.fail("expected " + result.error);
    }
  }
  return r;
}

}  // namespace

ClusterConfig ClusterConfigLoader::parse(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(formatInputError(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "not valid YAML: " + e.msg));
  }
  const Node top{file, root, ""};
  if (!root.IsMap()) top.fail("expected a mapping with 'workers', got " + top.shown());
  top.onlyKeys({"name", "scrape_interval_s", "logs_from_start", "router", "client_logs", "workers"});
  ClusterConfig c;
  c.file = file;
  c.name = root["name"] ? top.child("name").text() : fs::path(file).stem().string();
  if (root["scrape_interval_s"]) c.scrape_interval_s = top.child("scrape_interval_s").number(0.05, 3600);
  if (root["logs_from_start"]) c.logs_from_start = top.child("logs_from_start").boolean();
  if (root["router"]) c.router = routerSection(top.child("router"));
  if (root["client_logs"])
    for (auto& l : top.child("client_logs").texts()) c.client_logs.push_back(resolve(file, l));
  if (!root["workers"]) top.fail("expected 'workers', a list of the cluster's workers");
  const Node ws = top.child("workers");
  if (!ws.node.IsSequence() || ws.node.size() == 0) ws.fail("expected a non-empty list of workers, got " + ws.shown());
  std::set<std::string> ids;
  int serving = 0, prefill = 0;
  for (std::size_t i = 0; i < ws.node.size(); ++i) {
    const Node n = ws.item(i);
    LiveWorkerConfig w = worker(n, file);
    if (!ids.insert(w.id).second) n.child("id").fail("expected a unique id, got '" + w.id + "' a second time");
    serving += w.role != WorkerRole::Prefill;
    prefill += w.role == WorkerRole::Prefill;
    c.workers.push_back(std::move(w));
  }
  if (serving == 0) ws.fail("expected at least one decode or unified worker");
  if (serving > kMaxWorkers) ws.fail("expected at most " + std::to_string(kMaxWorkers) + " decode or unified workers");
  if (prefill > kMaxPrefillWorkers)
    ws.fail("expected at most " + std::to_string(kMaxPrefillWorkers) + " prefill workers");
  return c;
}

ClusterConfig ClusterConfigLoader::load(const std::string& path) { return parse(InputFile::readAll(path), path); }

std::string kvEventEndpointProblem(const std::string& value) {
  if (value.rfind("ipc://", 0) == 0) return value.size() > 6 ? "" : "no path after ipc://";
  if (value.rfind("tcp://", 0) != 0) return "not tcp:// or ipc://";
  const std::string rest = value.substr(6);
  if (rest.find('*') != std::string::npos) return "a wildcard is the publisher's to bind; give its host";
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) return "no HOST:PORT";
  if (rest.find_first_not_of("0123456789", colon + 1) != std::string::npos) return "the port is not a number";
  return "";
}

}  // namespace kvscope
