// The paired tests behind every sweep verdict: the exact sign-flip test (meet in the middle over
// 2^n patterns) at 6, 12 and 20 pairs, its 100,000-pattern sample at 25 and 40 pairs, the Wilcoxon
// test with tied ranks at 20, and one whole comparison (both tests, plus the bootstrap interval from
// 10 pairs). A sweep runs one comparison per grid point and metric, and the Sweep window redoes them
// whenever a run finishes, so these set how long a table refresh takes.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/stats/PairedComparison.h"
#include "core/stats/SignFlipTest.h"
#include "core/stats/WilcoxonSignedRank.h"

using namespace kvscope;

namespace {
std::vector<double> differences(int n, double shift) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(n));
  std::normal_distribution<double> noise(shift, 1.0);
  std::vector<double> d(static_cast<std::size_t>(n));
  for (auto& x : d) x = noise(rng);
  return d;
}
}  // namespace

static void BM_SignFlip(benchmark::State& state) {
  const auto d = differences(static_cast<int>(state.range(0)), 0.3);
  for (auto _ : state) benchmark::DoNotOptimize(SignFlipTest::test(d).p_value);
  state.counters["n"] = static_cast<double>(d.size());
}
BENCHMARK(BM_SignFlip)->Arg(6)->Arg(12)->Arg(20)->Arg(25)->Arg(40)->Unit(benchmark::kMicrosecond);

static void BM_WilcoxonTiedRanks(benchmark::State& state) {
  auto d = differences(20, 0.3);
  for (auto& x : d) x = static_cast<double>(static_cast<int>(x * 2));  // coarse: many ties
  for (auto _ : state) benchmark::DoNotOptimize(WilcoxonSignedRank::test(d).p_value);
}
BENCHMARK(BM_WilcoxonTiedRanks)->Unit(benchmark::kMicrosecond);

static void BM_PairedComparison(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const std::vector<double> base(static_cast<std::size_t>(n), 10.0);
  auto cand = differences(n, 0.3);
  for (auto& x : cand) x += 10.0;
  for (auto _ : state) benchmark::DoNotOptimize(PairedComparison::compare(base, cand, 0.05).p_value);
}
BENCHMARK(BM_PairedComparison)->Arg(3)->Arg(10)->Arg(20)->Arg(30)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
