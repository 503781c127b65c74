// The summary and the diagnosis stay bounded on an endless stream: latencies and session counts
// are exact for finite runs and become fixed-size sketches past a limit, within their stated error.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/diagnosis/DiagnosisEngine.h"
#include "core/metrics/SummaryCollector.h"
#include "core/stats/DistinctCount.h"
#include "core/stats/LatencySample.h"
#include "core/stats/Percentiles.h"

using namespace kvscope;

namespace {
std::vector<double> lognormal(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(0.5, 1.2);  // seconds: a few ms to a few minutes
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

Event at(double seconds, EventPayload p) { return Event{0, secondsToTime(seconds), std::move(p)}; }

RunStarted threeDecodeWorkers() {
  RunStarted r;
  r.scenario = "synthetic";
  for (const char* n : {"D0", "D1", "D2"}) r.workers.push_back({n, WorkerRole::Decode, 1'000'000});
  return r;
}
}  // namespace

class StreamingStatsTest : public QObject {
  Q_OBJECT
 private slots:
  void exactSampleMatchesSortedPercentiles_data();
  void exactSampleMatchesSortedPercentiles();
  void summariseSelectsWhatASortGives();
  void foldedSampleIsWithinItsRelativeError();
  void foldedSampleKeepsExtremesOutsideItsRange();
  void distinctCountIsExactThenEstimates();
  void summaryCollectorStaysBoundedOnAnEndlessStream();
  void diagnosisStaysBoundedAndStillLinksCrashToCorrection();
};

void StreamingStatsTest::exactSampleMatchesSortedPercentiles_data() {
  QTest::addColumn<int>("n");
  QTest::newRow("empty") << 0;
  QTest::newRow("one") << 1;
  QTest::newRow("two") << 2;
  QTest::newRow("thousand") << 1000;
}

void StreamingStatsTest::exactSampleMatchesSortedPercentiles() {
  QFETCH(int, n);
  const auto values = lognormal(static_cast<std::size_t>(n), 3);
  LatencySample sample;
  std::vector<double> seen;
  // Ask in the middle too: the lazy sort-and-merge must give the same answer as a full sort.
  for (std::size_t i = 0; i < values.size(); ++i) {
    sample.add(values[i]);
    seen.push_back(values[i]);
    if (i == values.size() / 3 || i + 1 == values.size()) {
      auto copy = seen;
      const SampleSummary want = summarise(copy);
      const SampleSummary got = sample.summary();
      QCOMPARE(got.count, want.count);
      QCOMPARE(got.p50, want.p50);
      QCOMPARE(got.p90, want.p90);
      QCOMPARE(got.p99, want.p99);
      QVERIFY(std::abs(got.mean - want.mean) <= 1e-12 * std::max(1.0, want.mean));
    }
  }
  QVERIFY(sample.exact());
  QCOMPARE(sample.summary().count, static_cast<std::size_t>(n));
}

// summarise() selects its percentiles (nth_element) instead of sorting: the same numbers, to the
// bit, as the sorted sample gives, with ties and tiny samples where the neighbours coincide.
void StreamingStatsTest::summariseSelectsWhatASortGives() {
  std::mt19937_64 rng(17);
  for (std::size_t n : {1, 2, 3, 7, 10, 100, 101, 1001, 20000})
    for (bool ties : {false, true}) {
      std::vector<double> values = lognormal(n, static_cast<unsigned>(n));
      if (ties)
        for (double& v : values) v = static_cast<double>(rng() % 5);
      auto sorted = values;
      std::sort(sorted.begin(), sorted.end());
      auto shuffled = values;
      const SampleSummary got = summarise(shuffled);
      QCOMPARE(got.count, n);
      QCOMPARE(got.p50, percentileSorted(sorted, 50));
      QCOMPARE(got.p90, percentileSorted(sorted, 90));
      QCOMPARE(got.p99, percentileSorted(sorted, 99));
      double sum = 0;
      for (double v : values) sum += v;
      QCOMPARE(got.mean, sum / static_cast<double>(n));
    }
}

void StreamingStatsTest::foldedSampleIsWithinItsRelativeError() {
  const auto values = lognormal(200'000, 11);
  LatencySample sample(1000);
  for (std::size_t i = 0; i < 100'000; ++i) sample.add(values[i]);
  QVERIFY(!sample.exact());
  const std::size_t bytes_half = sample.memoryBytes();
  for (std::size_t i = 100'000; i < values.size(); ++i) sample.add(values[i]);
  QCOMPARE(sample.memoryBytes(), bytes_half);  // twice the values, not one byte more

  auto sorted = values;
  const SampleSummary want = summarise(sorted);
  const SampleSummary got = sample.summary();
  QCOMPARE(got.count, want.count);
  QVERIFY(std::abs(got.mean - want.mean) <= 1e-9 * want.mean);
  for (auto [g, w] : {std::pair{got.p50, want.p50}, {got.p90, want.p90}, {got.p99, want.p99}})
    QVERIFY2(std::abs(g - w) <= LatencySample::kRelativeError * w * 1.0001,
             qPrintable(QString("got %1, exact %2").arg(g, 0, 'g', 10).arg(w, 0, 'g', 10)));
  // Exact mode would have held 200K doubles; the histogram is a fixed ~110 KB.
  QVERIFY(bytes_half < 200'000 * sizeof(double) / 4);
}

void StreamingStatsTest::foldedSampleKeepsExtremesOutsideItsRange() {
  LatencySample sample(4);
  for (double v : {0.0, 0.0, 2e7, 3e7, 5.0, 5.0}) sample.add(v);
  QVERIFY(!sample.exact());
  const SampleSummary s = sample.summary();
  QCOMPARE(s.count, std::size_t{6});
  QCOMPARE(s.p99, 3e7);  // past the histogram's range: the largest value seen, never beyond it
  QCOMPARE(sample.summary().mean, (2e7 + 3e7 + 10.0) / 6);
  QVERIFY(std::abs(s.p50 - 5.0) <= 5.0 * LatencySample::kRelativeError * 1.0001);
}

void StreamingStatsTest::distinctCountIsExactThenEstimates() {
  DistinctCount count(1000);
  for (std::uint64_t round = 0; round < 3; ++round)
    for (std::uint64_t id = 1; id <= 1000; ++id) count.add(id);  // duplicates count once
  QVERIFY(count.exact());
  QCOMPARE(count.count(), std::size_t{1000});

  for (std::uint64_t id = 1001; id <= 1'000'000; ++id) count.add(id);
  QVERIFY(!count.exact());
  const std::size_t bytes = count.memoryBytes();
  const auto estimate = static_cast<double>(count.count());
  // HyperLogLog with 2^14 registers: standard error 0.81%; allow four of them.
  QVERIFY2(std::abs(estimate - 1e6) <= 0.033 * 1e6, qPrintable(QString::number(estimate)));
  for (std::uint64_t id = 1; id <= 1'000'000; id += 7) count.add(id);  // all seen before
  QCOMPARE(static_cast<double>(count.count()), estimate);
  QCOMPARE(count.memoryBytes(), bytes);
  QVERIFY(bytes < 64 * 1024);
}

void StreamingStatsTest::summaryCollectorStaysBoundedOnAnEndlessStream() {
  // Every request opens a new session: the worst case for per-worker session sets.
  SummaryCollector collector;
  collector.onEvent(at(0, threeDecodeWorkers()));
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> latency(0.0, 1.0);
  std::size_t bytes_at_1m = 0;
  const std::uint64_t requests = 2'000'000;
  for (std::uint64_t r = 1; r <= requests; ++r) {
    const double t = static_cast<double>(r) * 0.001;
    const auto worker = static_cast<WorkerId>(r % 3);
    collector.onEvent(at(t, Admission{r, r, worker, AdmissionResult::Admitted, RoutePath::Seed, 100}));
    const double e2e = latency(rng);
    collector.onEvent(at(t, RequestDone{r,
                                        r,
                                        1,
                                        worker,
                                        RoutePath::Seed,
                                        RequestStatus::Ok,
                                        secondsToTime(e2e / 4),
                                        secondsToTime(e2e),
                                        100,
                                        10,
                                        {}}));
    if (r % 5 == 0) collector.onEvent(at(t, Eviction{worker, r, 5000, EvictionGranularity::Session, 1}));
    if (r == requests / 2) bytes_at_1m = collector.memoryBytes();
  }
  const std::size_t bytes_at_2m = collector.memoryBytes();
  QVERIFY2(bytes_at_2m <= bytes_at_1m, qPrintable(QString("%1 -> %2").arg(bytes_at_1m).arg(bytes_at_2m)));
  QVERIFY(bytes_at_2m < 8u << 20);  // exact sets and vectors would need well over 50 MB

  const RunSummary s = collector.summary();
  QCOMPARE(s.completed, static_cast<long>(requests));
  QCOMPARE(s.e2e_s.count, static_cast<std::size_t>(requests));
  QVERIFY(std::abs(s.e2e_s.p50 - 1.0) < 0.01);  // the lognormal(0, 1) median is e^0
  for (const WorkerSummary& w : s.workers) {
    QCOMPARE(w.bindings, static_cast<long>(requests / 3) + (w.id == "D0" ? 0 : w.id == "D1" ? 1 : 1));
    QVERIFY2(
        std::abs(static_cast<double>(w.sessions) - static_cast<double>(w.bindings)) <=
            0.033 * static_cast<double>(w.bindings),
        qPrintable(QString("%1: %2 sessions of %3").arg(QString::fromStdString(w.id)).arg(w.sessions).arg(w.bindings)));
  }
  QVERIFY(std::abs(static_cast<double>(s.eviction_sessions_hit) - requests / 5.0) <= 0.033 * requests / 5.0);
}

void StreamingStatsTest::diagnosisStaysBoundedAndStillLinksCrashToCorrection() {
  DiagnosisEngine engine;
  engine.onEvent(at(0, threeDecodeWorkers()));
  std::size_t bytes_early = 0;
  for (int i = 1; i <= 400'000; ++i) {
    const double t = i * 0.01;
    const auto r = static_cast<RequestId>(i);
    engine.onEvent(at(t, Correction{1, r, r, 6648, 43459, 43459, CorrectionFault::Crash}));
    if (i % 1000 == 0) engine.onEvent(at(t + 0.004, WorkerCrashed{1, "AssertionError: extend_input_len", 0}));
    engine.onEvent(at(t, Eviction{0, r, 40'000, EvictionGranularity::Session, 1}));
    engine.onEvent(
        at(t, RequestDone{
                  r, r, 1, 0, RoutePath::Direct, RequestStatus::Ok, secondsToTime(0.2), secondsToTime(1), 10, 10, {}}));
    if (i == 200'000) bytes_early = engine.memoryBytes();
  }
  // Past the sketches' limits only the 10-s failure buckets grow: 4,000 s is 400 of them.
  QVERIFY2(engine.memoryBytes() <= bytes_early + 400 * 64,
           qPrintable(QString("%1 -> %2").arg(bytes_early).arg(engine.memoryBytes())));
  std::vector<Finding> crashes;
  for (const Finding& f : engine.findings())
    if (f.mode == "D") crashes.push_back(f);
  QCOMPARE(crashes.size(), std::size_t{100});  // 400 crashes: the first 100 listed, the rest counted
  QVERIFY(crashes.front().evidence.find("Correcting streaming-session extend_input_len from 6648") !=
          std::string::npos);
  QCOMPARE(crashes.front().window_start_s, 10.0);  // the correction's time, not the crash's
  QVERIFY(crashes.back().evidence.find("300 more invariant crashes") != std::string::npos);
}

QTEST_GUILESS_MAIN(StreamingStatsTest)
#include "test_streaming_stats.moc"
