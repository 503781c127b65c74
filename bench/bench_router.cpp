// Routing decisions per second, per policy (every registered one), with the full prefix recomputation and with the
// per-session routing state (issue 17 section 2), beside a plain loop of flat hash map lookups over
// every block of the same prompts (the practical limit for a router that rewalks the prompt).
//
//   bench_router                     the table: e3 prompts and multi-turn sessions, 8 workers; then
//                                    each phase's time per decision at 8, 64 and 512 workers
//   bench_router --large             also a large index (10M resident blocks by default)
//   bench_router --large-blocks=N --large-workers=W --seconds=S
//   bench_router --gbench [google benchmark flags]   also the Google Benchmark cases
// Numbers only: nothing here asserts a rate (the tests assert behaviour).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <random>
#include <string>

#include <absl/container/flat_hash_map.h>

#include "core/router/PolicyRegistry.h"
#include "core/router/Router.h"
#include "core/scenario/Scenario.h"
#include "core/trace/BlockChain.h"
#include "core/workload/SyntheticAgenticGenerator.h"

using namespace kvscope;

namespace {
constexpr int kWorkers = 8;

struct Prompts {
  std::vector<RouteRequest> requests;
  std::vector<std::vector<BlockHash>> hashes;  // per request (e3) or per session's longest turn (multi-turn)
  std::vector<WorkerId> home;                  // per request: the worker holding its session's blocks
  std::size_t total_hashes = 0;
};

// Every turn of the e3 workload, with each session's blocks resident on one worker (as after a
// while of sticky routing), so decisions walk real prefix matches of 15-120K-token prompts.
const Prompts& e3Prompts() {
  static Prompts p = [&] {
    Prompts out;
    const Scenario s = Scenario::load("e3-load-floor");
    const Workload w = SyntheticAgenticGenerator::generate(s.workload.synthetic, s.seed);
    std::vector<BlockHash> h;
    for (const auto& session : w.sessions)
      for (std::size_t k = 0; k < session.turns.size(); ++k) {
        expandBlockHashes(session.turns[k].prompt, s.block_size, h);
        out.hashes.push_back(h);
        out.requests.push_back(RouteRequest{out.requests.size() + 1,
                                            session.id,
                                            static_cast<std::int32_t>(k + 1),
                                            session.turns[k].prompt.input_tokens,
                                            {}});
        out.home.push_back(static_cast<WorkerId>(session.id % kWorkers));
        out.total_hashes += h.size();
      }
    for (std::size_t i = 0; i < out.requests.size(); ++i) out.requests[i].hashes = out.hashes[i];
    return out;
  }();
  return p;
}

// Agentic sessions as a serving router sees them: turns interleaved across sessions, each turn's
// prompt the previous one plus 200-400 new blocks, up to ~2,000 blocks, after a shared system
// prompt of 32 blocks. A session's turns are prefixes of its last turn's chain.
Prompts multiTurnPrompts(int sessions, int workers, std::uint64_t seed) {
  Prompts out;
  std::mt19937_64 rng(seed);
  std::vector<BlockHash> boilerplate;
  boilerplate.reserve(32);
  for (int j = 0; j < 32; ++j) boilerplate.push_back(mixHash(0xb0b0, static_cast<std::uint64_t>(j)));
  std::vector<std::vector<std::size_t>> turns(static_cast<std::size_t>(sessions));
  for (int s = 0; s < sessions; ++s) {
    std::vector<BlockHash> chain = boilerplate;
    std::size_t len = boilerplate.size();
    while (true) {
      len += 200 + rng() % 201;
      if (len > 2000) break;
      turns[static_cast<std::size_t>(s)].push_back(len);
    }
    while (chain.size() < turns[static_cast<std::size_t>(s)].back())
      chain.push_back(mixHash(static_cast<std::uint64_t>(s + 1) * 0x9e3779b97f4a7c15ULL + seed, chain.size()));
    out.hashes.push_back(std::move(chain));
  }
  for (std::size_t round = 0;; ++round) {
    bool any = false;
    for (int s = 0; s < sessions; ++s) {
      const auto& t = turns[static_cast<std::size_t>(s)];
      if (round >= t.size()) continue;
      any = true;
      const auto& chain = out.hashes[static_cast<std::size_t>(s)];
      out.requests.push_back(
          RouteRequest{out.requests.size() + 1, static_cast<SessionId>(s + 1), static_cast<std::int32_t>(round + 1),
                       static_cast<std::int32_t>(t[round] * 24), std::span<const BlockHash>(chain).first(t[round])});
      out.home.push_back(static_cast<WorkerId>(s % workers));
      out.total_hashes += t[round];
    }
    if (!any) break;
  }
  return out;
}

void populate(Router& router, const Prompts& p) {
  for (std::size_t i = 0; i < p.requests.size(); ++i) {
    router.onChainStored(p.home[i], p.requests[i].session, p.requests[i].hashes, 0);
    router.bind(p.requests[i].session, p.home[i]);
  }
}

std::vector<WorkerLoad> busyLoads(int workers) {
  return std::vector<WorkerLoad>(static_cast<std::size_t>(workers),
                                 WorkerLoad{true, 8, 2, 4000, 400000, 600000, 850000, 6, 0});
}

// Whole passes over the requests (so every mode sees the same mix of turns) for at least
// `seconds` of this thread's CPU time, in five slices: the best slice's passes x requests / CPU
// seconds. On a shared machine wall time and the slowest slices measure the neighbours, not the code.
double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double ratePerSecond(std::size_t requests, double seconds, const std::function<void(std::size_t)>& one) {
  double best = 0;
  for (int slice = 0; slice < 5; ++slice) {
    const double start = threadSeconds();
    std::size_t done = 0;
    double elapsed = 0;
    do {
      for (std::size_t i = 0; i < requests; ++i) one(i);
      done += requests;
      elapsed = threadSeconds() - start;
    } while (elapsed < seconds / 5);
    best = std::max(best, static_cast<double>(done) / elapsed);
  }
  return best;
}

// With churn, every decision is preceded by an eviction as an LRU pool makes them: one cold block
// (of an idle session's chain, resident on a random worker) leaves and is stored back, so the index
// keeps its size while every session's remembered prefix on that worker has to be checked against
// the removal. The plain loop pays the same erase and insert in its map.
struct Churn {
  bool on = false;
  std::mt19937_64 rng{3};
  struct Eviction {
    WorkerId worker;
    SessionId session;
    std::span<const BlockHash> block;
  };
  Eviction next() {
    static const std::vector<BlockHash> cold = [] {
      std::vector<BlockHash> c;
      c.reserve(4096);
      for (std::uint64_t i = 0; i < 4096; ++i) c.push_back(mixHash(0xc01d, i));
      return c;
    }();
    const std::size_t i = rng() % cold.size();
    return {static_cast<WorkerId>(i % kWorkers), 1'000'000 + i / 512, std::span<const BlockHash>(cold).subspan(i, 1)};
  }
  // A cold block is a chain of its own (the root's child), so both index kinds take it as events
  // that name their chain.
  static void populate(Router& router) {
    Churn c;
    for (int k = 0; k < 8192; ++k) {
      const auto e = c.next();
      router.onChainStored(e.worker, e.session, e.block, 0);
    }
  }
};

// `index`: look the blocks up in that router's prefix index (PrefixIndex::holders) instead of a map
// of the prompts' own blocks, so a large index is compared with lookups in a map as large.
double plainLoopRate(const Prompts& p, double seconds, bool churn_on = false, const Router* index = nullptr) {
  if (index) {
    std::uint64_t acc = 0;
    const double rate = ratePerSecond(p.requests.size(), seconds, [&](std::size_t i) {
      for (BlockHash h : p.requests[i].hashes) acc += index->index().holds(h, 0);
    });
    benchmark::DoNotOptimize(acc);
    return rate;
  }
  absl::flat_hash_map<BlockHash, std::uint64_t> map;
  for (std::size_t i = 0; i < p.requests.size(); ++i)
    for (BlockHash h : p.requests[i].hashes) map[h] |= std::uint64_t{1} << (p.home[i] % 64);
  std::uint64_t acc = 0;
  Churn churn{churn_on};
  const double rate = ratePerSecond(p.requests.size(), seconds, [&](std::size_t i) {
    if (churn.on) {
      const auto e = churn.next();
      map.erase(e.block[0]);
      map[e.block[0]] |= std::uint64_t{1} << e.worker;
    }
    for (BlockHash h : p.requests[i].hashes) {
      auto it = map.find(h);
      acc += it == map.end() ? 0 : it->second;
    }
  });
  benchmark::DoNotOptimize(acc);
  return rate;
}

double decisionRate(Router& router, const Prompts& p, bool session_state, double seconds, bool churn_on = false) {
  router.setSessionState(session_state);
  const auto loads = busyLoads(router.numWorkers());
  RouteDecision d;
  WorkerId sink = 0;
  Churn churn{churn_on};
  const double rate = ratePerSecond(p.requests.size(), seconds, [&](std::size_t i) {
    if (churn.on) {
      const auto e = churn.next();
      router.onChainRemoved(e.worker, e.block, 0);
      router.onChainStored(e.worker, e.session, e.block, 0);
    }
    router.decide(p.requests[i], loads, d);
    sink += d.chosen;
  });
  benchmark::DoNotOptimize(sink);
  return rate;
}

// `shared`: routers already holding a large index (one per index kind), instead of ones populated
// with the prompts themselves.
struct SharedRouters {
  Router* per_block = nullptr;
  Router* chain = nullptr;
};

void printTable(const char* title, const Prompts& p, int workers, double seconds, SharedRouters shared = {},
                bool churn = false) {
  std::printf("\n%s: %zu decisions per pass, mean %.0f blocks per prompt, %d workers\n", title, p.requests.size(),
              static_cast<double>(p.total_hashes) / static_cast<double>(p.requests.size()), workers);
  const double plain = plainLoopRate(p, seconds, churn, shared.per_block);
  std::printf("  plain lookup loop over the whole prompt%s: %10.0f prompts/s\n",
              shared.per_block ? " (in the router's own index)" : "", plain);
  // full and session: the per-block index (PrefixIndex) without and with the per-session state, as
  // LiveRouter routes; chain: the per-run index (ChainIndex), as the twin routes.
  std::printf("  %-24s %12s %13s %12s %10s %10s %11s %8s\n", "policy", "full dec/s", "session dec/s", "chain dec/s",
              "full/plain", "sess/plain", "chain/plain", "resumed");
  KnobRegistry knobs;
  knobs.apply({{"K", 200}}, "bench");
  // Every registered policy; one that reads the knob cache_view runs twice: under its default view
  // (the proxy's LRU, which this bench never fills) and under cache_view = exact (the index match).
  struct Row {
    std::string label;
    std::string policy;
    double cache_view;
  };
  std::vector<Row> rows;
  for (const std::string_view name : policyNames()) {
    rows.push_back({std::string(name), std::string(name), knobs.get(KnobId::CacheView)});
    if (makePolicy(name)->readsCacheView()) rows.push_back({std::string(name) + " exact", std::string(name), 0});
  }
  const double default_view = knobs.get(KnobId::CacheView);
  for (const Row& row : rows) {
    knobs.apply({{"cache_view", row.cache_view}}, "bench");
    auto routerOf = [&](Router::IndexKind kind, std::unique_ptr<Router>& own) {
      Router* router = kind == Router::IndexKind::Chain ? shared.chain : shared.per_block;
      if (!router) {
        own = std::make_unique<Router>(workers, 24, knobs, 1, kind);
        populate(*own, p);
        if (churn) Churn::populate(*own);
        router = own.get();
      }
      router->setPolicy(row.policy);
      return router;
    };
    std::unique_ptr<Router> own_blocks, own_chain;
    Router* router = routerOf(Router::IndexKind::PerBlock, own_blocks);
    const double full = decisionRate(*router, p, false, seconds, churn);
    const auto& c = router->sessionCache();
    const std::uint64_t resumed0 = c.resumed(), all0 = c.resumed() + c.recomputed();
    const double session = decisionRate(*router, p, true, seconds, churn);
    const double resumed = static_cast<double>(c.resumed() - resumed0) /
                           static_cast<double>(std::max<std::uint64_t>(1, c.resumed() + c.recomputed() - all0));
    own_blocks.reset();
    const double chain = decisionRate(*routerOf(Router::IndexKind::Chain, own_chain), p, true, seconds, churn);
    std::printf("  %-24s %12.0f %13.0f %12.0f %9.2fx %9.2fx %10.2fx %7.0f%%\n", row.label.c_str(), full, session, chain,
                full / plain, session / plain, chain / plain, 100 * resumed);
    std::fflush(stdout);
  }
  knobs.apply({{"cache_view", default_view}}, "bench");
}

// Issue 50: where a decision's time goes, per phase (Router::lastPhaseTimes: the prefix lookup and
// the policy's scoring), at cluster sizes from the lab's to the router's limit. Multi-turn sessions,
// two per worker, kv-aware with the per-session state, as LiveRouter routes them.
void printPhases() {
  std::printf("\nper phase (kv-aware, multi-turn sessions, two per worker; ns per decision):\n");
  std::printf("  %8s %10s %10s %10s %10s %10s %10s %10s\n", "workers", "decisions", "lookup p50", "lookup p99",
              "score p50", "score p99", "total p50", "total p99");
  KnobRegistry knobs;
  knobs.apply({{"K", 200}}, "bench");
  for (const int workers : {8, 64, 512}) {
    const Prompts p = multiTurnPrompts(2 * workers, workers, 11);
    Router router(workers, 24, knobs, 1, Router::IndexKind::PerBlock);
    populate(router, p);
    router.setPolicy("kv-aware");
    router.setPhaseTiming(true);
    const auto loads = busyLoads(workers);
    RouteDecision d;
    std::vector<double> lookup, score, total;
    for (int pass = 0; pass < 5; ++pass)
      for (const RouteRequest& r : p.requests) {
        router.decide(r, loads, d);
        const Router::PhaseTimes& t = router.lastPhaseTimes();
        lookup.push_back(static_cast<double>(t.lookup_ns));
        score.push_back(static_cast<double>(t.score_ns));
        total.push_back(static_cast<double>(t.lookup_ns + t.score_ns));
      }
    const auto pct = [](std::vector<double>& v, double q) {
      std::sort(v.begin(), v.end());
      return v[std::min(v.size() - 1, static_cast<std::size_t>(q / 100 * static_cast<double>(v.size())))];
    };
    std::printf("  %8d %10zu %10.0f %10.0f %10.0f %10.0f %10.0f %10.0f\n", workers, total.size(), pct(lookup, 50),
                pct(lookup, 99), pct(score, 50), pct(score, 99), pct(total, 50), pct(total, 99));
    std::fflush(stdout);
  }
  std::printf("  (2,048 workers: beyond the router's %d; hashing and the RPC's own share: bench_router_rpc)\n",
              kMaxWorkers);
}

long rssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// A large index: sessions of up to ~2,000 blocks, each resident on its worker, until the index
// holds `blocks` blocks; then the multi-turn decisions of a sample of those sessions.
void largeIndex(std::size_t blocks, int workers, double seconds) {
  if (workers > kMaxWorkers) {
    std::printf("\nlarge index: %d workers requested, the router takes at most %d; measuring %d workers\n", workers,
                kMaxWorkers, kMaxWorkers);
    workers = kMaxWorkers;
  }
  const int sessions = static_cast<int>(blocks / 1810) + 1;  // a chain is ~1,810 blocks of its own
  const long rss0 = rssKiB();
  const Prompts all = multiTurnPrompts(sessions, workers, 99);
  KnobRegistry knobs;
  knobs.apply({{"K", 200}}, "bench");
  Router router(workers, 24, knobs, 1, Router::IndexKind::PerBlock);
  Router chain(workers, 24, knobs, 1, Router::IndexKind::Chain);
  const double prompts_mib = static_cast<double>(rssKiB() - rss0) / 1024.0;
  for (Router* r : {&router, &chain}) {
    const long rss1 = rssKiB();
    const auto t0 = std::chrono::steady_clock::now();
    // Store each session's longest chain once (its turns are prefixes of it).
    for (std::size_t s = 0; s < all.hashes.size(); ++s)
      r->onChainStored(static_cast<WorkerId>(s % static_cast<std::size_t>(workers)), s + 1, all.hashes[s], 0);
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const long rss2 = rssKiB();
    const std::size_t resident = r->indexBlocks();
    std::printf(
        "\nlarge index (%s): %zu resident blocks over %d workers, %d sessions; built in %.2f s (%.2f M blocks/s); "
        "index RSS %.0f MiB = %.1f bytes/block, by its own count %.1f bytes/block (prompts themselves %.0f MiB)\n",
        r == &chain ? "per run" : "per block", resident, workers, sessions, build_s,
        static_cast<double>(resident) / build_s / 1e6, static_cast<double>(rss2 - rss1) / 1024.0,
        static_cast<double>(rss2 - rss1) * 1024.0 / static_cast<double>(resident),
        static_cast<double>(r->indexBytes()) / static_cast<double>(resident), prompts_mib);
  }
  // Decisions: the multi-turn requests of the first 256 sessions, against the whole index.
  Prompts sample;
  for (std::size_t i = 0; i < all.requests.size(); ++i)
    if (all.requests[i].session <= 256) {
      sample.requests.push_back(all.requests[i]);
      sample.home.push_back(all.home[i]);
      sample.total_hashes += all.requests[i].hashes.size();
    }
  for (std::size_t i = 0; i < all.hashes.size() && i < 256; ++i)
    for (Router* r : {&router, &chain})
      r->bind(static_cast<SessionId>(i + 1), static_cast<WorkerId>(i % static_cast<std::size_t>(workers)));
  printTable("large index, multi-turn sessions", sample, workers, seconds, SharedRouters{&router, &chain});
}

}  // namespace

// The Google Benchmark cases (with --gbench): one policy's decisions on e3 prompts.
static void BM_RouteDecision(benchmark::State& state, const char* policy, bool session_state) {
  KnobRegistry knobs;
  knobs.apply({{"K", 200}}, "bench");
  Router router(kWorkers, 24, knobs, 1);
  router.setPolicy(policy);
  router.setSessionState(session_state);
  const Prompts& p = e3Prompts();
  populate(router, p);
  const auto loads = busyLoads(kWorkers);
  RouteDecision d;
  std::size_t i = 0, hashes = 0;
  for (auto _ : state) {
    const auto& r = p.requests[i];
    router.decide(r, loads, d);
    benchmark::DoNotOptimize(d.chosen);
    hashes += r.hashes.size();
    if (++i == p.requests.size()) i = 0;
  }
  state.counters["decisions/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["hashes/s"] = benchmark::Counter(static_cast<double>(hashes), benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_RouteDecision, kv_aware_full, "kv-aware", false);
BENCHMARK_CAPTURE(BM_RouteDecision, kv_aware_session, "kv-aware", true);
BENCHMARK_CAPTURE(BM_RouteDecision, dynamo_kv_full, "dynamo-kv", false);
BENCHMARK_CAPTURE(BM_RouteDecision, dynamo_kv_session, "dynamo-kv", true);

int main(int argc, char** argv) {
  bool large = false, gbench = false;
  std::size_t large_blocks = 10'000'000;
  int large_workers = 256;
  double seconds = 0.3;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--large")
      large = true;
    else if (a == "--gbench")
      gbench = true;
    else if (a.rfind("--large-blocks=", 0) == 0)
      large = true, large_blocks = std::stoull(a.substr(15));
    else if (a.rfind("--large-workers=", 0) == 0)
      large = true, large_workers = std::stoi(a.substr(16));
    else if (a.rfind("--seconds=", 0) == 0)
      seconds = std::stod(a.substr(10));
    else
      rest.push_back(argv[i]);
  }
  printTable("e3 prompts (each session's turns in a row)", e3Prompts(), kWorkers, seconds);
  const Prompts multi = multiTurnPrompts(64, kWorkers, 7);
  printTable("multi-turn sessions (turns interleaved, +200-400 blocks a turn)", multi, kWorkers, seconds);
  printTable("the same with an eviction before every decision (a cold block, on a random worker)", multi, kWorkers,
             seconds, {}, /*churn=*/true);
  printPhases();
  if (large) largeIndex(large_blocks, large_workers, seconds);
  if (gbench) {
    int n = static_cast<int>(rest.size());
    benchmark::Initialize(&n, rest.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  }
  return 0;
}
