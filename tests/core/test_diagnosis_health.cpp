// The diagnosis an operator reads on a live cluster: a worker that is down or degraded is its own
// finding (H), never a cold D; a finding that stops holding stays listed as resolved with its
// times; no finding's window ends after the last event the engine has seen.
#include <QTest>

#include <string>
#include <vector>

#include "core/diagnosis/DiagnosisEngine.h"

using namespace kvscope;

namespace {

class Feed {
 public:
  explicit Feed(int decode) {
    RunStarted r;
    for (int i = 0; i < decode; ++i) r.workers.push_back({"D" + std::to_string(i), WorkerRole::Decode, 100000});
    send(0, r);
  }
  void send(double t, EventPayload p) { engine.onEvent(Event{++seq_, secondsToTime(t), std::move(p)}); }
  // `n` sessions admitted on `worker`, spread over [from, to).
  void admit(WorkerId worker, int n, double from, double to) {
    for (int i = 0; i < n; ++i) {
      const double t = from + (to - from) * i / n;
      RouteDecision d;
      d.request = d.session = ++request_;
      send(t, d);
      Admission a;
      a.request = a.session = request_;
      a.worker = worker;
      send(t, a);
    }
  }
  void health(double t, const std::string& worker, WorkerHealth h, const std::string& reason) {
    send(t, WorkerHealthChanged{worker, h, reason});
  }
  const Finding* find(const std::string& mode) const {
    last_ = engine.findings();
    for (const Finding& f : last_)
      if (f.mode == mode) return &f;
    return nullptr;
  }

  DiagnosisEngine engine;

 private:
  std::uint64_t seq_ = 0;
  RequestId request_ = 0;
  mutable std::vector<Finding> last_;
};

std::vector<std::string> subjects(const Finding* f) { return f ? f->subjects : std::vector<std::string>{}; }

}  // namespace

class TestDiagnosisHealth : public QObject {
  Q_OBJECT
 private slots:
  // Issue 34's live cluster: D1 answers 503, D2 does not answer, D3 is healthy and gets nothing.
  // Only D3 is a cold D; D1 and D2 are named as down with their reasons and since when.
  void unhealthyWorkersAreNeverColdD() {
    Feed feed(4);
    feed.health(5, "D1", WorkerHealth::Degraded, "HTTP 503");
    feed.health(6, "D2", WorkerHealth::Unreachable, "connection refused");
    feed.admit(0, 300, 10, 200);
    const Finding* b = feed.find("B");
    QVERIFY(b);
    QCOMPARE(subjects(b), std::vector<std::string>{"D3"});
    QVERIFY(!b->resolved);
    const Finding* h = feed.find("H");
    QVERIFY(h);
    QCOMPARE(subjects(h), (std::vector<std::string>{"D1", "D2"}));
    QVERIFY2(h->evidence.find("D1 degraded since 5.0 s (HTTP 503)") != std::string::npos, h->evidence.c_str());
    QVERIFY2(h->evidence.find("D2 unreachable since 6.0 s (connection refused)") != std::string::npos,
             h->evidence.c_str());
    QCOMPARE(h->window_start_s, 5.0);
  }

  // With every idle D unhealthy there is no cold D at all, only the health finding.
  void noColdDWhenTheIdleWorkersAreDown() {
    Feed feed(3);
    feed.send(1, WorkerCrashed{1, "exit code 1"});
    feed.health(2, "D2", WorkerHealth::Degraded, "HTTP 503");
    feed.admit(0, 300, 10, 200);
    QVERIFY(!feed.find("B"));
    const Finding* h = feed.find("H");
    QVERIFY(h);
    QVERIFY2(h->evidence.find("D1 down since 1.0 s (exit code 1)") != std::string::npos, h->evidence.c_str());
  }

  // A worker that recovers: its health finding is kept, resolved at the check that found it well,
  // and it counts as a cold D again once it has been healthy most of the time and gets nothing.
  void recoveredWorkerResolvesItsFinding() {
    Feed feed(2);
    feed.health(5, "D1", WorkerHealth::Unreachable, "timeout");
    feed.admit(0, 150, 6, 40);
    feed.health(41, "D1", WorkerHealth::Ok, "");
    feed.admit(0, 150, 41, 300);  // D1 healthy from 41 s on, and still given nothing
    const Finding* h = feed.find("H");
    QVERIFY(h);
    QVERIFY(h->resolved);
    QCOMPARE(h->window_start_s, 5.0);
    QVERIFY2(h->window_end_s >= 41 && h->window_end_s <= 50, qPrintable(QString::number(h->window_end_s)));
    QCOMPARE(subjects(feed.find("B")), std::vector<std::string>{"D1"});
  }

  // A cold D that the router later fills stays listed: resolved, with the time it stopped holding.
  void coldDecodeThatStopsHoldingStaysResolved() {
    Feed feed(2);
    feed.admit(0, 200, 1, 100);
    const Finding* b = feed.find("B");
    QVERIFY(b && !b->resolved);
    feed.admit(1, 200, 100, 200);
    b = feed.find("B");
    QVERIFY(b);
    QVERIFY(b->resolved);
    QVERIFY2(b->window_end_s > 100 && b->window_end_s <= 110, qPrintable(QString::number(b->window_end_s)));
    QCOMPARE(subjects(b), std::vector<std::string>{"D1"});
  }

  // A reseed storm is judged on the first minute: asked at 25 s, its window ends at 25 s, not at
  // the minute's end in the future.
  void noWindowEndsInTheFuture() {
    Feed feed(2);
    feed.send(1, RouteDecision{});
    for (int i = 0; i < 20; ++i) {
      RequestDone d;
      d.request = static_cast<RequestId>(100 + i);
      d.status = i % 2 ? RequestStatus::Failed : RequestStatus::Ok;
      d.e2e = secondsToTime(1);
      feed.send(5 + i, d);
    }
    const Finding* storm = feed.find("C'");
    QVERIFY(storm);
    for (const Finding& f : feed.engine.findings())
      QVERIFY2(f.window_end_s <= 24.0 && f.window_start_s <= f.window_end_s,
               qPrintable(QString::fromStdString(f.mode) + " ends at " + QString::number(f.window_end_s)));
  }
};

QTEST_GUILESS_MAIN(TestDiagnosisHealth)
#include "test_diagnosis_health.moc"
