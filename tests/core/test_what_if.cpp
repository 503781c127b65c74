// The what-if preview forks a run faithfully: its "without" future is the run itself (same seed, the
// same knob history), an empty change gives two equal futures, and a change acts through the
// mechanism it names (K on e2-cold-d while sessions still join sends new bindings to the cold D).
#include <QtTest>

#include "core/run/WhatIfPreview.h"
#include "core/scenario/Scenario.h"
#include "core/sim/ClusterSimulator.h"
#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"

using namespace kvscope;
using namespace kvscope::test;

namespace {
double shareOf(const RunSummary& s, const std::string& worker) {
  for (const auto& w : s.workers)
    if (w.id == worker) return w.share;
  return -1;
}
}  // namespace

class WhatIfTest : public QObject {
  Q_OBJECT
 private slots:
  void theWithoutFutureIsTheRunItself() {
    const PreparedRun run = prepareRun(Scenario::load("e3-load-floor"), {});
    // The run as the console had it: K changed to 50 at 200 s.
    ControlStep k50;
    k50.time = secondsToTime(200);
    k50.knobs = {{"K", 50}};
    const WhatIfPreview preview(run, {k50});
    ControlStep change;
    change.knobs = {{"K", 0}};
    const SimTime now = secondsToTime(600), horizon = secondsToTime(300);
    const WhatIfResult r = preview.run(now, horizon, change);
    QVERIFY(r.with.error.empty());

    // The same run straight through.
    EventLog log;
    ClusterSimulator sim(run.scenario, run.workload, run.scenario.seed);
    sim.addSink(&log);
    sim.start();
    sim.runUntil(k50.time);
    QVERIFY(sim.applyKnobs(k50.knobs, "test").ok);
    sim.runUntil(now + horizon);
    const std::vector<WorkerInfo> workers = log.all<RunStarted>().front().second.workers;
    std::size_t d0 = 0;
    while (d0 < workers.size() && workers[d0].name != "D0") ++d0;
    QVERIFY(d0 < workers.size());
    std::vector<double> straight;
    for (const auto& [t, snap] : log.all<Snapshot>())
      for (const WorkerGauges& g : snap.workers)
        if (t >= now && t <= now + horizon && g.worker == static_cast<WorkerId>(d0))
          straight.push_back(static_cast<float>(static_cast<double>(g.kv_used) / static_cast<double>(g.kv_capacity)));
    QCOMPARE(r.without.workers.front(), std::string("D0"));
    const auto& forked = r.without.perWorker(WorkerGauge::KvFraction)->front().raw();
    QCOMPARE(static_cast<std::size_t>(forked.size()), straight.size());
    for (std::size_t i = 0; i < straight.size(); ++i) QCOMPARE(static_cast<double>(forked[i].value), straight[i]);

    // Every per-worker gauge, under its key, is what the telemetry store keeps of the straight run
    // (the cumulative admissions included, which count from the run's start, not the fork's).
    TelemetryStore store;
    store.ingest(log.events);
    for (int g = 0; g < kWorkerGaugeCount; ++g) {
      const auto gauge = static_cast<WorkerGauge>(g);
      const std::vector<MinMaxSeries>* future = r.without.perWorker(gauge);
      QVERIFY2(future && future->size() == 3, gaugeKey(gauge));
      std::vector<RawSample> stored;
      for (const RawSample& sample : store.workers()[d0].gauge(gauge).raw())
        if (sample.time >= now && sample.time <= now + horizon) stored.push_back(sample);
      const auto& forecast = future->front().raw();
      QVERIFY2(forecast.size() == stored.size() && !stored.empty(), gaugeKey(gauge));
      for (std::size_t i = 0; i < stored.size(); ++i) {
        QCOMPARE(forecast[i].time, stored[i].time);
        QCOMPARE(forecast[i].value, stored[i].value);
        QCOMPARE(forecast[i].peak, stored[i].peak);
      }
    }
  }

  void anEmptyChangeGivesTwoEqualFutures() {
    const PreparedRun run = prepareRun(Scenario::load("evict-storm"), {});
    const WhatIfPreview preview(run, {});
    const WhatIfResult r = preview.run(secondsToTime(400), secondsToTime(600), ControlStep{});
    QCOMPARE(r.with.horizon.total, r.without.horizon.total);
    QCOMPARE(r.with.horizon.eviction_count, r.without.horizon.eviction_count);
    QCOMPARE(r.with.horizon.ttft_s.p90, r.without.horizon.ttft_s.p90);
  }

  void loadFloorMovesNewSessionsToTheColdWorker() {
    const PreparedRun run = prepareRun(Scenario::load("e2-cold-d"), {});
    const WhatIfPreview preview(run, {});
    ControlStep change;
    change.knobs = {{"K", 200}};
    const WhatIfResult r = preview.run(secondsToTime(60), secondsToTime(600), change);
    QVERIFY(r.with.error.empty());
    QVERIFY2(shareOf(r.without.horizon, "D2") < 0.05, qPrintable(QString::number(shareOf(r.without.horizon, "D2"))));
    QVERIFY2(shareOf(r.with.horizon, "D2") > 0.15, qPrintable(QString::number(shareOf(r.with.horizon, "D2"))));
  }

  void aRefusedChangeSaysWhy() {
    const PreparedRun run = prepareRun(Scenario::load("e3-load-floor"), {});
    ControlStep change;
    change.knobs = {{"K", -5}};
    const WhatIfResult r = WhatIfPreview(run, {}).run(secondsToTime(60), secondsToTime(60), change);
    QVERIFY(!r.with.error.empty());
  }
};

QTEST_MAIN(WhatIfTest)
#include "test_what_if.moc"
