// A finished request's trace (what the timeline draws for a selected request) is its own events:
// arrival and first token from its RequestDone, its KV transfer P -> D from its TransferStarted and
// TransferFinished; requests served without a transfer have none; the newest `limit` are kept.
#include <QtTest>

#include <map>

#include "core/telemetry/RequestTraces.h"
#include "core/telemetry/TelemetryStore.h"
#include "tests/support/SimHarness.h"

using namespace kvscope;
using namespace kvscope::test;

class TestRequestTraces : public QObject {
  Q_OBJECT
 private slots:
  void tracesAreTheRequestsOwnEvents() {
    EventLog log;
    SimulationOptions options;
    options.duration_s = 240;
    simulate("e2-cold-d", {}, options, &log);
    TelemetryStore store;
    store.ingest(log.events);

    std::map<RequestId, std::pair<SimTime, TransferStarted>> started;
    std::map<RequestId, SimTime> finished;
    for (const auto& [t, s] : log.all<TransferStarted>()) started[s.request] = {t, s};
    for (const auto& [t, f] : log.all<TransferFinished>()) finished[f.request] = t;
    int with_transfer = 0, without = 0;
    for (const auto& [t, d] : log.all<RequestDone>()) {
      const std::optional<RequestTrace> trace = store.requestTraces().find(d.request);
      QVERIFY(trace);
      QCOMPARE(trace->done, t);
      QCOMPARE(trace->arrival, t - d.e2e);
      QCOMPARE(trace->worker, d.worker);
      if (d.ttft >= 0) QVERIFY(trace->arrival <= trace->first_token && trace->first_token <= trace->done);
      const auto s = started.find(d.request);
      if (s == started.end()) {
        QVERIFY(!trace->transfer);
        ++without;
        continue;
      }
      QVERIFY(trace->transfer);
      ++with_transfer;
      QCOMPARE(trace->transfer->start, s->second.first);
      QCOMPARE(trace->transfer->prefill, s->second.second.prefill);
      QVERIFY(trace->arrival <= trace->transfer->start);
      if (finished.count(d.request)) {
        QCOMPARE(trace->transfer->end, finished[d.request]);
        QVERIFY(trace->transfer->end <= trace->done);
      }
      // Its rows on the timeline: the decode worker, the prefill, and the link between them.
      QVERIFY(store.workerRow(trace->worker) >= 0);
      QVERIFY(store.prefillRow(trace->transfer->prefill) >= 0);
      QVERIFY(store.linkRow(trace->transfer->prefill, trace->worker) >= 0);
    }
    QVERIFY2(with_transfer > 20 && without > 20,
             qPrintable(QStringLiteral("%1 and %2").arg(with_transfer).arg(without)));
  }

  void keepsTheNewestRequests() {
    RequestTraces traces(3);
    for (RequestId r = 1; r <= 5; ++r) {
      RequestDone d;
      d.request = r;
      d.e2e = secondsToTime(1);
      traces.onEvent(Event{r, secondsToTime(static_cast<double>(r) + 1), d});
    }
    QVERIFY(!traces.find(2));
    QVERIFY(traces.find(3) && traces.find(5));
    QCOMPARE(traces.find(4)->arrival, secondsToTime(4));
  }
};

QTEST_MAIN(TestRequestTraces)
#include "test_request_traces.moc"
