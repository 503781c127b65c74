// The bounded telemetry store the console reads: min/max decimation never hides a spike, memory
// stays bounded at any run length, and the store's numbers agree with the run's summary.
#include <QtTest>
#include <numeric>
#include <optional>

#include <algorithm>
#include <random>

#include "core/telemetry/MinMaxSeries.h"
#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"

using namespace kvscope;
using namespace kvscope::test;

class TelemetryStoreTest : public QObject {
  Q_OBJECT
 private slots:
  void decimationKeepsEveryColumnsMinAndMax_data();
  void decimationKeepsEveryColumnsMinAndMax();
  void longSeriesStayBoundedAndKeepTheirSpike();
  void aSampleFromThePastKeepsTheOrder();
  void storeAgreesWithTheRunSummary();
  void boundedRingsDropTheOldest();
  void aDecisionKeepsItsBestCandidatesAndTheChosen();
  void decisionsAreFoundWhateverTheIdOrder();
  void aSecondRunStartedStartsOver();
};

void TelemetryStoreTest::decimationKeepsEveryColumnsMinAndMax_data() {
  QTest::addColumn<int>("samples");
  QTest::addColumn<int>("columns");
  QTest::addColumn<int>("capacity");
  QTest::newRow("fewer samples than columns") << 50 << 200 << 4096;
  QTest::newRow("many samples per column") << 4000 << 100 << 4096;
  QTest::newRow("only the raw ring's part of a longer run") << 20000 << 300 << 1024;
  QTest::newRow("one column") << 1000 << 1 << 4096;
}

void TelemetryStoreTest::decimationKeepsEveryColumnsMinAndMax() {
  QFETCH(int, samples);
  QFETCH(int, columns);
  QFETCH(int, capacity);
  MinMaxSeries series(64, 4, 8, static_cast<std::size_t>(capacity));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.2, 0.6);
  std::vector<std::pair<SimTime, float>> raw;
  for (int i = 0; i < samples; ++i) {
    const SimTime t = secondsToTime(i);
    // One-sample spikes to 1.0 and dips to 0: exactly what a chart must not lose.
    const double v = i % 997 == 500 ? 1.0 : i % 1301 == 700 ? 0.0 : noise(rng);
    series.add(t, v);
    raw.emplace_back(t, static_cast<float>(v));
  }
  // The window the raw ring still holds (older data has only rollups, checked in test_chart_truth).
  const SimTime from = series.exactSince();
  const SimTime to = raw.back().first;
  const ColumnGrid grid{from, to, columns};
  EnvelopeOptions points;
  points.hold = false;
  const auto drawn = series.envelope(grid, points);
  QCOMPARE(static_cast<int>(drawn.size()), columns);
  // Column by column: each column's min/max equals the brute-force min/max of its samples.
  for (int c = 0; c < columns; ++c) {
    double lo = 2, hi = -1;
    for (const auto& [t, v] : raw)
      if (t >= from && t <= to && grid.columnOf(t) == c) {
        lo = std::min<double>(lo, v);
        hi = std::max<double>(hi, v);
      }
    const EnvelopeColumn& d = drawn[static_cast<std::size_t>(c)];
    QCOMPARE(d.present, hi >= 0);
    if (!d.present) continue;
    QVERIFY(d.exact);
    QCOMPARE(d.lo, lo);
    QCOMPARE(d.hi, hi);
  }
}

void TelemetryStoreTest::longSeriesStayBoundedAndKeepTheirSpike() {
  MinMaxSeries series(512, 4, 8, 512);
  const int n = 2'000'000;  // ~23 days of 1-s snapshots
  for (int i = 0; i < n; ++i) series.add(secondsToTime(i), i == 1234 ? 1.0 : 0.5);
  for (std::size_t l = 0; l < series.levelCount(); ++l) QVERIFY(series.bucketsAt(l) <= 512);
  QVERIFY(series.memoryBytes() < 8 * 512 * sizeof(MinMaxBucket) + 512 * sizeof(RawSample) + 4096);
  // The spike, 23 days ago, is still the maximum of the whole range at a coarse level.
  QCOMPARE(series.maxIn(0, secondsToTime(n)), 1.0);
  QVERIFY(series.firstTime() <= secondsToTime(1234));
  const auto columns = series.envelope({0, secondsToTime(n), 800}, {});
  QCOMPARE(columns.size(), std::size_t{800});
  QVERIFY(std::all_of(columns.begin(), columns.end(), [](const EnvelopeColumn& c) { return c.present; }));
  QVERIFY(std::any_of(columns.begin(), columns.end(), [](const EnvelopeColumn& c) { return c.hi == 1.0; }));
}

// A source whose clock steps back must not break the time order the envelope searches by.
void TelemetryStoreTest::aSampleFromThePastKeepsTheOrder() {
  MinMaxSeries series;
  series.add(secondsToTime(10), 1.0);
  series.add(secondsToTime(5), 2.0);
  series.add(secondsToTime(11), 3.0);
  const auto& raw = series.raw();
  QVERIFY(
      std::is_sorted(raw.begin(), raw.end(), [](const RawSample& a, const RawSample& b) { return a.time < b.time; }));
  QCOMPARE(series.maxIn(0, secondsToTime(10)), 2.0);  // kept, at the newest time then
}

void TelemetryStoreTest::storeAgreesWithTheRunSummary() {
  EventLog log;
  SimulationOptions options;
  options.duration_s = 1200;
  const RunSummary expected = simulate("evict-storm", {}, options, &log);
  TelemetryStore store;
  // In frame-sized batches, as the console's frame timer feeds it.
  for (std::size_t i = 0; i < log.events.size(); i += 1500)
    store.ingest(std::vector<Event>(log.events.begin() + static_cast<long>(i),
                                    log.events.begin() + static_cast<long>(std::min(log.events.size(), i + 1500))));
  QCOMPARE(store.eventCount(), static_cast<std::uint64_t>(log.events.size()));
  QVERIFY(store.finished());
  const RunSummary got = store.summary();
  QCOMPARE(got.total, expected.total);
  QCOMPARE(got.eviction_count, expected.eviction_count);
  QCOMPARE(got.reseeds, expected.reseeds);
  QCOMPARE(store.workers().size(), expected.workers.size());
  long evictions = 0;
  for (const auto& w : store.workers()) {
    QVERIFY(!w.gauge(WorkerGauge::KvFraction).empty());
    QVERIFY(w.gauge(WorkerGauge::KvFraction).maxIn(0, store.now()) <= 1.0);
    evictions += w.evictions;
  }
  QCOMPARE(evictions, expected.eviction_count);
  // Discrete events are in time order and the range query agrees with a scan.
  const auto& d = store.discreteEvents();
  QVERIFY(std::is_sorted(d.begin(), d.end(), [](const Event& a, const Event& b) { return a.time < b.time; }));
  const auto [first, last] = store.discreteRange(secondsToTime(300), secondsToTime(600));
  long scanned = 0;
  for (const Event& e : d) scanned += e.time >= secondsToTime(300) && e.time <= secondsToTime(600);
  QCOMPARE(static_cast<long>(last - first), scanned);
  // Whole-run latency window equals the summary's percentiles.
  const LatencyWindow w = store.latencyWindow(1e9);
  QCOMPARE(w.requests, expected.total);
  QCOMPARE(w.ttft_s.p99, expected.ttft_s.p99);
  QCOMPARE(w.e2e_s.p50, expected.e2e_s.p50);
  // Every finished request still held has its decision.
  for (const RequestDone& r : store.requests()) {
    const RouteDecision* decision = store.decisionFor(r.request);
    QVERIFY(decision);
    QCOMPARE(decision->request, r.request);
  }
}

void TelemetryStoreTest::boundedRingsDropTheOldest() {
  EventLog log;
  SimulationOptions options;
  options.duration_s = 1200;
  simulate("evict-storm", {}, options, &log);
  TelemetryStore::Limits limits;
  limits.discrete_events = 20;
  limits.decisions = 50;
  limits.requests = 40;
  TelemetryStore store(limits);
  store.ingest(log.events);
  QCOMPARE(store.discreteEvents().size(), std::size_t{20});
  QVERIFY(store.droppedEvents() > 0);
  QCOMPARE(store.decisions().size(), std::size_t{50});
  QCOMPARE(store.requests().size(), std::size_t{40});
  // The oldest decision dropped is no longer found; the newest are.
  QVERIFY(store.decisionFor(store.decisions().back().request));
  std::size_t decisions = 0;
  for (const Event& e : log.events) decisions += std::holds_alternative<RouteDecision>(e.payload);
  QVERIFY(decisions > 50);
  const RequestId first =
      std::get<RouteDecision>(
          std::find_if(log.events.begin(), log.events.end(),
                       [](const Event& e) { return std::holds_alternative<RouteDecision>(e.payload); })
              ->payload)
          .request;
  QVERIFY(!store.decisionFor(first));
}

// A 64-candidate decision keeps its 16 best ranked; a chosen worker ranked below them (admission
// retried down the list) replaces the last kept one, and the store says how many it left out.
// Request ids in order are found by a binary search over the ring, out of order through an index
// built when the first one arrives out of order. Either way a request routed twice (a retraction's
// re-route) shows its newer decision, and one that left the ring shows none.
void TelemetryStoreTest::decisionsAreFoundWhateverTheIdOrder() {
  for (const bool shuffled : {false, true}) {
    TelemetryStore::Limits limits;
    limits.decisions = 50;
    TelemetryStore store(limits);
    std::vector<RequestId> ids(200);
    std::iota(ids.begin(), ids.end(), RequestId{1});
    if (shuffled) std::shuffle(ids.begin() + 20, ids.end(), std::mt19937(3));  // in order at first
    std::vector<std::pair<RequestId, WorkerId>> routed;                        // every decision, in arrival order
    std::uint64_t seq = 0;
    auto route = [&](RequestId id, WorkerId chosen) {
      RouteDecision d{id, id, 1, "kv-aware", chosen, false, {}, 0, {}, {}};
      d.candidates.push_back(CandidateScore{chosen, 1.0, true, 0, {}});
      store.ingest(Event{++seq, static_cast<SimTime>(seq), d});
      routed.emplace_back(id, chosen);
    };
    for (const RequestId id : ids) {
      route(id, static_cast<WorkerId>(id % 7));
      if (id % 10 == 0) route(id, static_cast<WorkerId>(100 + id % 7));
    }
    for (RequestId id = 1; id <= 200; ++id) {
      std::optional<WorkerId> want;  // the newest of the last 50 decisions for `id`
      for (std::size_t i = routed.size() - 50; i < routed.size(); ++i)
        if (routed[i].first == id) want = routed[i].second;
      const RouteDecision* got = store.decisionFor(id);
      const QByteArray where =
          QStringLiteral("%1 ids, request %2").arg(shuffled ? "shuffled" : "ordered").arg(id).toUtf8();
      QVERIFY2(bool(got) == bool(want), where.constData());
      if (got) QVERIFY2(got->chosen == *want, where.constData());
    }
  }
}

void TelemetryStoreTest::aDecisionKeepsItsBestCandidatesAndTheChosen() {
  TelemetryStore::Limits limits;
  limits.decisions = 3;
  TelemetryStore store(limits);
  auto decision = [](RequestId id, WorkerId chosen) {
    RouteDecision d{id, id, 1, "kv-aware", chosen, false, {}, 0, {}, {}};
    for (int w = 0; w < 64; ++w)
      d.candidates.push_back(CandidateScore{static_cast<WorkerId>(63 - w), 100.0 - w, true, 0, {}});
    return d;
  };
  for (RequestId id = 1; id <= 5; ++id)
    store.ingest(Event{id, static_cast<SimTime>(id), decision(id, id == 5 ? 3 : 63)});
  QVERIFY(!store.decisionFor(2));  // three kept: 3, 4, 5
  const RouteDecision* top = store.decisionFor(4);
  QVERIFY(top);
  QCOMPARE(top->candidates.size(), std::size_t{16});
  QCOMPARE(top->candidates.front().worker, 63);
  QCOMPARE(top->candidates.back().worker, 48);
  QCOMPARE(store.candidatesOmitted(4), std::size_t{48});
  const RouteDecision* low = store.decisionFor(5);
  QVERIFY(low);
  QCOMPARE(low->candidates.size(), std::size_t{16});
  QCOMPARE(low->candidates.back().worker, 3);  // the chosen, ranked 61st
  QCOMPARE(low->candidates.back().score, 40.0);
  QCOMPARE(store.candidatesOmitted(5), std::size_t{48});
  QCOMPARE(store.candidatesOmitted(2), std::size_t{0});  // not held
}

void TelemetryStoreTest::aSecondRunStartedStartsOver() {
  EventLog log;
  SimulationOptions options;
  options.duration_s = 300;
  simulate("e3-load-floor", {}, options, &log);
  TelemetryStore store;
  store.ingest(log.events);
  const auto run = store.runId();
  const auto total = store.summary().total;
  QVERIFY(total > 0);
  // A replay's seek restates the run from its RunStarted: the store forgets the old stream.
  store.ingest(log.events);
  QVERIFY(store.runId() > run);
  QCOMPARE(store.summary().total, total);
  QCOMPARE(store.eventCount(), static_cast<std::uint64_t>(log.events.size()));
}

QTEST_GUILESS_MAIN(TelemetryStoreTest)
#include "test_telemetry_store.moc"
