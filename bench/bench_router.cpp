// Routing decisions per second on e3 prompts with 8 decode workers, beside a plain loop of flat
// hash map lookups over the same hashes (the practical limit for any prefix-matching router).
#include <benchmark/benchmark.h>

#include <absl/container/flat_hash_map.h>

#include "core/router/Router.h"
#include "core/scenario/Scenario.h"
#include "core/trace/BlockChain.h"
#include "core/workload/SyntheticAgenticGenerator.h"

using namespace kvscope;

namespace {
constexpr int kWorkers = 8;

struct Prompts {
  std::vector<RouteRequest> requests;
  std::vector<std::vector<BlockHash>> hashes;
  std::size_t total_hashes = 0;
};

// Every turn of the e3 workload, with each session's blocks resident on one worker (as after a
// while of sticky routing), so decisions walk real prefix matches of 15-120K-token prompts.
const Prompts& prompts() {
  static Prompts p = [&] {
    Prompts out;
    const Scenario s = Scenario::load("e3-load-floor");
    const Workload w = SyntheticAgenticGenerator::generate(s.workload.synthetic, s.seed);
    std::vector<BlockHash> h;
    for (const auto& session : w.sessions)
      for (std::size_t k = 0; k < session.turns.size(); ++k) {
        expandBlockHashes(session.turns[k].prompt, s.block_size, h);
        out.hashes.push_back(h);
        out.requests.push_back(RouteRequest{out.requests.size() + 1, session.id, static_cast<std::int32_t>(k + 1),
                                            session.turns[k].prompt.input_tokens, {}});
        out.total_hashes += h.size();
      }
    for (std::size_t i = 0; i < out.requests.size(); ++i) out.requests[i].hashes = out.hashes[i];
    return out;
  }();
  return p;
}

void populate(Router& router, const Prompts& p) {
  for (std::size_t i = 0; i < p.requests.size(); ++i) {
    const auto w = static_cast<WorkerId>(p.requests[i].session % kWorkers);
    router.onBlocksStored(w, p.requests[i].session, p.hashes[i]);
    router.bind(p.requests[i].session, w);
  }
}
}  // namespace

static void BM_RouteDecision(benchmark::State& state, const char* policy) {
  KnobRegistry knobs;
  knobs.apply({{"K", 200}}, "bench");
  Router router(kWorkers, 24, knobs, 1);
  router.setPolicy(policy);
  const Prompts& p = prompts();
  populate(router, p);
  std::vector<WorkerLoad> loads(kWorkers);
  for (int w = 0; w < kWorkers; ++w) loads[w] = WorkerLoad{true, 8, 2, 4000, 400000, 600000, 850000, 6, 0};
  RouteDecision d;
  std::size_t i = 0, hashes = 0;
  for (auto _ : state) {
    const auto& r = p.requests[i];
    router.decide(r, loads, d);
    benchmark::DoNotOptimize(d.chosen);
    hashes += r.hashes.size();
    if (++i == p.requests.size()) i = 0;
  }
  state.counters["decisions/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["hashes/s"] = benchmark::Counter(static_cast<double>(hashes), benchmark::Counter::kIsRate);
  state.counters["mean_blocks"] = static_cast<double>(p.total_hashes) / static_cast<double>(p.requests.size());
}
BENCHMARK_CAPTURE(BM_RouteDecision, kv_aware, "kv-aware");
BENCHMARK_CAPTURE(BM_RouteDecision, exclusive_overlap, "exclusive-overlap");
BENCHMARK_CAPTURE(BM_RouteDecision, unified, "unified");
BENCHMARK_CAPTURE(BM_RouteDecision, dynamo_kv, "dynamo-kv");

// The practical limit: one flat_hash_map lookup per block of the same prompts, nothing else.
static void BM_PlainLookupLoop(benchmark::State& state) {
  KnobRegistry knobs;
  Router router(kWorkers, 24, knobs, 1);
  const Prompts& p = prompts();
  absl::flat_hash_map<BlockHash, std::uint64_t> map;
  for (std::size_t i = 0; i < p.requests.size(); ++i)
    for (BlockHash h : p.hashes[i]) map[h] |= std::uint64_t{1} << (p.requests[i].session % kWorkers);
  std::size_t i = 0, hashes = 0;
  for (auto _ : state) {
    std::uint64_t acc = 0;
    for (BlockHash h : p.hashes[i]) {
      auto it = map.find(h);
      acc += it == map.end() ? 0 : it->second;
    }
    benchmark::DoNotOptimize(acc);
    hashes += p.hashes[i].size();
    if (++i == p.requests.size()) i = 0;
  }
  state.counters["decisions/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["hashes/s"] = benchmark::Counter(static_cast<double>(hashes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlainLookupLoop);

BENCHMARK_MAIN();
