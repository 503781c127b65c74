// Two summaries side by side (the compare view's tables): rows carry both values and the change,
// workers match by name whatever their order, and a worker only one run had keeps an empty side.
#include <QtTest>

#include "core/metrics/RunSideBySide.h"

using namespace kvscope;

namespace {
WorkerSummary worker(const std::string& id, const std::string& role, double share) {
  WorkerSummary w;
  w.id = id;
  w.role = role;
  w.share = share;
  return w;
}

const SideBySideRow* rowNamed(const RunSideBySide& s, const std::string& label) {
  for (const SideBySideRow& r : s.summary)
    if (r.label == label) return &r;
  return nullptr;
}
}  // namespace

class RunSideBySideTest : public QObject {
  Q_OBJECT
 private slots:
  void rowsHoldBothValuesAndTheChange();
  void workersMatchByName();
};

void RunSideBySideTest::rowsHoldBothValuesAndTheChange() {
  RunSummary a, b;
  a.ttft_s = {1.0, 0.5, 2.0, 3.0, 100};
  b.ttft_s = {1.0, 0.4, 1.5, 2.0, 90};
  a.lab.apc = 0.25;  // B has no APC (a run whose engine reported no cached tokens)
  const RunSideBySide s = RunSideBySide::of(a, b);
  const SideBySideRow* p90 = rowNamed(s, "TTFT p90 (s)");
  QVERIFY(p90);
  QCOMPARE(*p90->a, 2.0);
  QCOMPARE(*p90->b, 1.5);
  QCOMPARE(*p90->change(), -0.5);
  QCOMPARE(*p90->relativeChange(), -0.25);
  QVERIFY(p90->lower_is_better);
  const SideBySideRow* apc = rowNamed(s, "APC (%)");
  QVERIFY(apc);
  QCOMPARE(*apc->a, 25.0);
  QVERIFY(!apc->b && !apc->change() && !apc->relativeChange());
  QVERIFY(!apc->lower_is_better);
  // No request: a latency is missing, not 0.
  const RunSideBySide empty = RunSideBySide::of(RunSummary{}, b);
  QVERIFY(!rowNamed(empty, "TTFT p90 (s)")->a);
  QVERIFY(!rowNamed(empty, "requests")->relativeChange());  // A is 0: no share of it
}

void RunSideBySideTest::workersMatchByName() {
  RunSummary a, b;
  a.workers = {worker("P0", "prefill", 0), worker("D0", "decode", 0.6), worker("D1", "decode", 0.4)};
  a.lab.worker_ttft_p90_s = {std::nullopt, 1.0, 2.0};
  b.workers = {worker("D1", "decode", 0.7), worker("D2", "decode", 0.3)};
  b.lab.worker_ttft_p90_s = {4.0, std::nullopt};
  const RunSideBySide s = RunSideBySide::of(a, b);
  QCOMPARE(s.workers.size(), std::size_t(3));  // the prefill worker is no row
  QCOMPARE(s.workers[0].worker, std::string("D0"));
  QVERIFY(!s.workers[0].share.b);
  QCOMPARE(s.workers[1].worker, std::string("D1"));
  QCOMPARE(*s.workers[1].share.a, 40.0);
  QCOMPARE(*s.workers[1].share.b, 70.0);
  QCOMPARE(*s.workers[1].ttft_p90.a, 2.0);
  QCOMPARE(*s.workers[1].ttft_p90.b, 4.0);
  QCOMPARE(s.workers[2].worker, std::string("D2"));
  QVERIFY(!s.workers[2].share.a);
  QVERIFY(!s.workers[2].ttft_p90.b);
}

QTEST_MAIN(RunSideBySideTest)
#include "test_run_side_by_side.moc"
