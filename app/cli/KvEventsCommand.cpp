// `kvscope-cli kv-events`: what KVScope reads from engines' KV event endpoints (vLLM and SGLang
// --kv-events-config), one JSON object per decoded event, gap, replay and reachability change, then
// per endpoint what it holds. As `logs` is for log lines: a way to see, before a cluster file names
// the endpoints, that KVScope understands them.
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "app/cli/StopSignals.h"
#include "backend/live/KvEventSubscriber.h"
#include "core/live/ClusterConfigLoader.h"
#include "core/live/KvBlockState.h"
#include "core/model/Error.h"

namespace kvscope::cli {

namespace {

std::string hex(KvBlockKey k) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(k));
  return buf;
}

nlohmann::json hashes(const std::vector<KvBlockKey>& keys) {
  nlohmann::json out = nlohmann::json::array();
  for (const KvBlockKey k : keys) out.push_back(hex(k));
  return out;
}

// One endpoint's printer and block set; every line goes out whole under one lock.
struct Watched {
  std::string endpoint;
  std::mutex* print_mutex = nullptr;
  KvBlockState state{1};
  std::unique_ptr<KvEventSubscriber> subscriber;

  void print(nlohmann::json j) {
    j["endpoint"] = endpoint;
    std::lock_guard lock(*print_mutex);
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    std::fflush(stdout);
  }
};

// One decoded event of a batch as its JSON line.
nlohmann::json eventJson(std::uint64_t seq, const KvEventBatch& batch, const KvCacheEvent& event) {
  nlohmann::json j{{"seq", seq}, {"ts", batch.ts}};
  if (batch.dp_rank) j["dp_rank"] = *batch.dp_rank;
  if (const auto* s = std::get_if<KvBlockStored>(&event)) {
    j["kind"] = "stored";
    j["hashes"] = hashes(s->blocks);
    j["parent"] = s->parent ? nlohmann::json(hex(*s->parent)) : nlohmann::json(nullptr);
    j["tokens"] = s->token_ids.size();
    j["block_size"] = s->block_size;
    if (!s->medium.empty()) j["medium"] = s->medium;
    if (!s->lora_name.empty()) j["lora_name"] = s->lora_name;
    if (s->group_idx) j["group_idx"] = *s->group_idx;
  } else if (const auto* r = std::get_if<KvBlockRemoved>(&event)) {
    j["kind"] = "removed";
    j["hashes"] = hashes(r->blocks);
    if (!r->medium.empty()) j["medium"] = r->medium;
    if (r->group_idx) j["group_idx"] = *r->group_idx;
  } else {
    j["kind"] = "cleared";
  }
  return j;
}

// Prints everything the endpoint's subscriber reports, and keeps its block set.
KvEventSubscriber::Listener printingListener(Watched* p) {
  KvEventSubscriber::Listener l;
  l.batch = [p](std::uint64_t seq, KvEventBatch batch) {
    p->state.apply(0, batch);
    for (const auto& event : batch.events) p->print(eventJson(seq, batch, event));
    for (const auto& kind : batch.unknown_kinds) p->print({{"seq", seq}, {"kind", "unknown"}, {"name", kind}});
  };
  l.gap = [p](std::uint64_t first, std::uint64_t last, const std::string& why) {
    p->print({{"kind", "gap"}, {"first", first}, {"last", last}, {"why", why}});
  };
  l.health = [p](bool reachable, const std::string& why) {
    p->print({{"kind", "health"}, {"reachable", reachable}, {"why", why}});
  };
  l.restarted = [p] {
    p->state.forget(0);
    p->print({{"kind", "restarted"}});
  };
  l.undecodable = [p](std::uint64_t seq, const std::string& why) {
    p->print({{"kind", "undecodable"}, {"seq", seq}, {"why", printableText(why)}});
  };
  return l;
}

// At the end: the endpoint's counts and the blocks it holds.
void printSummary(Watched& w) {
  const auto c = w.subscriber->counts();
  const auto& s = w.state.counts(0);
  w.print({{"kind", "summary"},
           {"batches", c.batches},
           {"replayed", c.replayed},
           {"duplicates", c.duplicates},
           {"restarts", c.restarts},
           {"lost", c.lost},
           {"undecodable", c.undecodable},
           {"cached_blocks", w.state.blocks(0)},
           {"stored", s.stored},
           {"removed", s.removed},
           {"cleared", s.cleared},
           {"other_tiers", s.other_tiers}});
}

}  // namespace

Command addKvEvents(CLI::App& app) {
  auto* sub =
      app.add_subcommand("kv-events", "Print the KV cache events engines publish (vLLM, SGLang --kv-events-config)");
  sub->footer(
      "One JSON object per line: each decoded event (stored, removed, cleared, with the batch's sequence\n"
      "number, time and DP rank), gaps replay could not fill, reachability changes, batches that are not\n"
      "batches, and at the end per endpoint its counts and the blocks it holds. Hashes are the engine's,\n"
      "as 16 hex digits (a byte-string hash by its first 8 bytes).\n"
      "  kvscope-cli kv-events tcp://10.0.0.7:5557 --replay tcp://10.0.0.7:5558 --for 10");
  auto endpoints = std::make_shared<std::vector<std::string>>();
  auto replays = std::make_shared<std::vector<std::string>>();
  auto topic = std::make_shared<std::string>();
  auto seconds = std::make_shared<double>(0);
  auto format = std::make_shared<std::string>("jsonl");
  sub->add_option("endpoints", *endpoints, "The engines' PUB sockets, tcp://HOST:PORT or ipc://PATH")->required();
  sub->add_option("--replay", *replays, "Each endpoint's replay (ROUTER) socket, in the same order (repeatable)");
  sub->add_option("--topic", *topic, "Only messages under this topic (default: all)");
  sub->add_option("--for", *seconds, "Stop after this many seconds (default: at SIGINT/SIGTERM)")
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--format", *format, "Output format")->check(CLI::IsMember({"jsonl"}))->capture_default_str();
  return [endpoints, replays, topic, seconds, format] {
    if (replays->size() > endpoints->size())
      throw UsageError("--replay given " + std::to_string(replays->size()) + " times for " +
                       std::to_string(endpoints->size()) + " endpoints");
    for (const auto& e : *endpoints)
      if (const std::string why = kvEventEndpointProblem(e); !why.empty()) throw UsageError(e + ": " + why);
    for (const auto& e : *replays)
      if (const std::string why = kvEventEndpointProblem(e); !why.empty())
        throw UsageError("--replay " + e + ": " + why);
    const StopSignals stop;  // before the subscribers' threads start: they inherit the mask
    std::mutex print_mutex;
    std::vector<std::unique_ptr<Watched>> watched;
    for (std::size_t i = 0; i < endpoints->size(); ++i) {
      auto w = std::make_unique<Watched>();
      w->endpoint = (*endpoints)[i];
      w->print_mutex = &print_mutex;
      Watched* p = w.get();
      KvEventSubscriber::Listener l = printingListener(p);
      const std::string replay = i < replays->size() ? (*replays)[i] : std::string();
      w->subscriber =
          std::make_unique<KvEventSubscriber>(KvEventSubscriber::Endpoint{w->endpoint, replay, *topic}, std::move(l));
      watched.push_back(std::move(w));
    }
    for (auto& w : watched) w->subscriber->start();
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(*seconds);
    while (*seconds <= 0 || std::chrono::steady_clock::now() < until)
      if (stop.wait(std::chrono::milliseconds(100))) break;
    for (auto& w : watched) {
      w->subscriber->stop();
      printSummary(*w);
    }
    return 0;
  };
}

}  // namespace kvscope::cli
