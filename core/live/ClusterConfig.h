#pragma once
// The live cluster as its operator describes it: which workers exist, what role
// each plays, where its /metrics and log files are, which addresses the logs will name it by, and
// how often to scrape. Loaded from a human-editable YAML file by ClusterConfigLoader.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/live/EngineMetrics.h"

namespace kvscope {

// One KV event endpoint of a worker (vLLM or SGLang --kv-events-config): one per data-parallel rank.
struct KvEventEndpoint {
  std::string endpoint;  // the engine's PUB socket, tcp://HOST:PORT or ipc://PATH
  std::string replay;    // its replay (ROUTER) socket; "" when it has none
  std::string topic;     // the topic it publishes under ("" = every message)
};

struct LiveWorkerConfig {
  std::string id;  // "D0", "P0": the name every screen shows
  WorkerRole role = WorkerRole::Decode;
  EngineKind engine = EngineKind::Sglang;    // `engine: sglang | vllm`: whose /metrics and logs these are
  std::string metrics_url;                   // http://HOST:PORT/metrics; "" = not scraped
  std::vector<std::string> logs;             // scheduler log files (absolute, or relative to the cluster file)
  std::vector<std::string> mooncake_logs;    // the worker's Mooncake transfer-engine (glog) log files, same rules
  std::vector<std::string> metrics_scrapes;  // saved /metrics answers, each after a time line (import only)
  std::string bootstrap_address;             // prefill: the HOST:PORT decode logs name it by (bootstrap_addr)
  std::string mooncake_address;              // decode: the Mooncake session HOST:PORT prefill logs name it by
  std::int64_t kv_capacity_tokens = 0;       // used until /metrics reports max_total_num_tokens
  std::vector<KvEventEndpoint> kv_events;    // the engine's KV cache events (exact block state)
  long line = 0;                             // where the worker is declared in the file
};

// The optional `router:` section: KVScope serves kvscope.v1.Router for the lab's router, deciding
// with this policy and these knobs (changed later from the console or Control).
struct LiveRouterConfig {
  std::string policy = "kv-aware";
  int block_size = 24;                  // tokens per block hash the router sends
  std::map<std::string, double> knobs;  // overrides of the registry's defaults
};

struct ClusterConfig {
  std::string file;
  std::string name;
  double scrape_interval_s = 1.0;
  bool logs_from_start = false;            // read the logs' history too (default: follow from the end)
  std::optional<LiveRouterConfig> router;  // serve the Router service (optional)
  std::vector<std::string> client_logs;    // benchmark client logs (failed requests), optional
  std::vector<LiveWorkerConfig> workers;
};

}  // namespace kvscope
