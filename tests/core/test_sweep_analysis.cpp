// From runs to tables, on hand-made summaries: intervals across seeds, the change against the
// baseline, the paired test on the seeds both points ran (a missing run drops only its pair), the
// per-D bindings, the two-policy table, the three output formats, and recordings grouped into points.
#include <QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "sweep/RecordedRunSet.h"
#include "sweep/SweepAnalysis.h"
#include "sweep/SweepReport.h"

using namespace kvscope;

namespace {

// QCOMPARE prints these by name.
QString str(PairedTest t) { return QString::fromUtf8(toString(t).data(), static_cast<qsizetype>(toString(t).size())); }
QString str(Verdict v) { return QString::fromUtf8(toString(v).data(), static_cast<qsizetype>(toString(v).size())); }

RunSummary summary(const std::string& policy, std::uint64_t seed, double e2e_mean, long failed = 0) {
  RunSummary s;
  s.scenario = "toy";
  s.policy = policy;
  s.seed = seed;
  s.total = 100;
  s.failed = failed;
  s.completed = 100 - failed;
  s.failure_rate = failed / 100.0;
  s.e2e_s.mean = e2e_mean;
  s.e2e_s.p90 = 2 * e2e_mean;
  s.workers = {{"D0", "decode", 60, 0.6, 10, 0.5, 0, 1000}, {"D1", "decode", 40, 0.4, 8, 0.5, 0, 500}};
  s.token_imbalance = 2.0;
  return s;
}

SweepPoint policyPoint(const std::string& policy) {
  SweepPoint p;
  p.coords = {{"policy", policy}};
  p.policy = policy;
  return p;
}

SweepData twoPolicies(std::size_t seeds) {
  SweepData d;
  d.scenario = "toy";
  d.points = {policyPoint("lmetric"), policyPoint("unified")};
  for (std::size_t k = 1; k <= seeds; ++k) d.seeds.push_back(k);
  d.runs.assign(2, std::vector<std::optional<RunSummary>>(seeds));
  for (std::size_t k = 0; k < seeds; ++k) {
    d.runs[0][k] = summary("lmetric", k + 1, 10.0 + static_cast<double>(k));        // 10, 11, 12, ...
    d.runs[1][k] = summary("unified", k + 1, 9.0 + static_cast<double>(k) * 1.01);  // better on every seed
  }
  return d;
}

}  // namespace

class TestSweepAnalysis : public QObject {
  Q_OBJECT
 private slots:
  void intervalsChangeAndPairedTest() {
    const SweepData d = twoPolicies(6);
    const SweepAnalysis a = SweepAnalysis::of(d);
    const std::size_t m = a.metricIndex("e2e_mean_s");
    QVERIFY(m < a.metrics.size());
    const MetricCell& base = a.cells[0][m];
    const MetricCell& other = a.cells[1][m];
    QCOMPARE(base.values, (std::vector<double>{10, 11, 12, 13, 14, 15}));
    QCOMPARE(base.interval.mean, 12.5);
    QVERIFY(!base.change_pct && !base.comparison);  // the baseline is not compared with itself
    // unified mean = 9 + 1.01 * 2.5 = 11.525: (11.525 - 12.5) / 12.5 = -7.8%.
    QVERIFY(std::abs(*other.change_pct - (-7.8)) < 1e-9);
    QCOMPARE(str(other.comparison->test), str(PairedTest::WilcoxonExact));
    QCOMPARE(other.comparison->p_value, 0.03125);  // 6 of 6 seeds better
    QCOMPARE(str(other.comparison->verdict), str(Verdict::Significant));
    QVERIFY(a.two_policy_other.has_value());
    QCOMPARE(*a.two_policy_other, std::size_t(1));
    // Per-D: the mean bindings and share across seeds.
    QCOMPARE(a.worker_ids, (std::vector<std::string>{"D0", "D1"}));
    QCOMPARE(a.workers[1][0].bindings, 60.0);
    QCOMPARE(a.workers[1][1].share, 0.4);
    QVERIFY(a.metricIndex("share_D1") < a.metrics.size());
  }

  void aMissingRunDropsOnlyItsPair() {
    SweepData d = twoPolicies(6);
    d.runs[1][2].reset();
    const SweepAnalysis a = SweepAnalysis::of(d);
    const std::size_t m = a.metricIndex("e2e_mean_s");
    QCOMPARE(a.cells[1][m].values.size(), std::size_t(5));
    QCOMPARE(a.cells[1][m].comparison->pairs, 5);
    QCOMPARE(str(a.cells[1][m].comparison->test), str(PairedTest::Bootstrap));  // 5 pairs cannot reach 0.05
    QCOMPARE(a.runs_done[1], std::size_t(5));
  }

  void tooFewSeedsIsSaid() {
    const SweepData d = twoPolicies(2);
    const SweepAnalysis a = SweepAnalysis::of(d);
    const std::size_t m = a.metricIndex("e2e_mean_s");
    QCOMPARE(str(a.cells[1][m].comparison->verdict), str(Verdict::TooFewSeeds));
    const SweepReport r(d, a);
    QVERIFY(QString::fromStdString(r.markdown()).contains("too few seeds (2 pairs)"));
    QCOMPARE(QString::fromStdString(r.json()["points"][1]["metrics"]["e2e_mean_s"]["test"]["verdict"].get<std::string>()),
             QString("too few seeds"));
  }

  void formats() {
    const SweepData d = twoPolicies(3);
    const SweepAnalysis a = SweepAnalysis::of(d);
    const SweepReport r(d, a);
    const QString md = QString::fromStdString(r.markdown());
    QVERIFY(md.contains("## unified vs lmetric"));
    QVERIFY(md.contains("| E2E mean (s) | 11.000 ± "));  // lmetric over seeds 1..3: 10, 11, 12
    QVERIFY(md.contains("## Per-D bindings"));
    QVERIFY(md.contains("| policy=unified | 60.0 | 60.0% | 10.0 | 40.0 | 40.0% | 8.0 |"));
    const QStringList csv = QString::fromStdString(r.csv()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(csv.size(), 1 + 2 * static_cast<int>(a.metrics.size()));
    QVERIFY(csv[0].startsWith("point,policy,metric,runs,mean,ci_low,ci_high,change_pct,test,p_value,verdict"));
    const nlohmann::json j = r.json();
    QCOMPARE(j["two_policy"]["rows"].size(), std::size_t(5));
    QCOMPARE(j["points"][0]["metrics"]["e2e_mean_s"]["mean"].get<double>(), 11.0);
    // 11 +- t(0.975, 2) * 1 / sqrt(3) = 11 +- 2.4841377...
    QVERIFY(std::abs(j["points"][0]["metrics"]["e2e_mean_s"]["ci95_high"].get<double>() - 13.484137657) < 1e-6);
  }

  void noTwoPolicyTableWhenMoreVaries() {
    SweepData d = twoPolicies(3);
    d.points[0].coords.push_back({"K", "0"});
    d.points[1].coords.push_back({"K", "200"});
    QVERIFY(!SweepAnalysis::of(d).two_policy_other.has_value());
  }

  void recordingsGroupIntoPairedPoints() {
    std::vector<RecordedRun> runs;
    for (std::uint64_t seed : {1, 2, 3})
      for (const char* policy : {"unified", "lmetric"}) {
        RecordedRun r;
        r.file = std::string(policy) + "-" + std::to_string(seed) + ".kvrec";
        r.run.scenario = "toy";
        r.run.policy = policy;
        r.run.seed = seed;
        r.run.knobs = {{"K", 0}, {"rho", 0.95}};
        r.summary = summary(policy, seed, policy == std::string("unified") ? 9.0 : 10.0);
        runs.push_back(r);
      }
    const SweepData d = RecordedRunSet::arrange(runs, 0.05);
    QCOMPARE(d.points.size(), std::size_t(2));
    QCOMPARE(d.points[0].label(), std::string("policy=unified"));  // the first file's point is the baseline
    QCOMPARE(d.baseline, std::size_t(0));
    QVERIFY(d.paired);
    QCOMPARE(d.seeds, (std::vector<std::uint64_t>{1, 2, 3}));
    QCOMPARE(d.runs[1][2]->policy, std::string("lmetric"));
    QVERIFY(SweepAnalysis::of(d).two_policy_other.has_value());

    // A seed missing on one side: unpaired, no test.
    std::vector<RecordedRun> uneven(runs.begin(), runs.end() - 1);
    const SweepData u = RecordedRunSet::arrange(uneven, 0.05);
    QVERIFY(!u.paired);
    QVERIFY(!SweepAnalysis::of(u).cells[1][0].comparison.has_value());

    // A knob that differs names the points; the same configuration and seed twice: one point per file.
    std::vector<RecordedRun> knobs{runs[0], runs[2]};
    knobs[1].run.knobs = {{"K", 200}, {"rho", 0.95}};
    QCOMPARE(RecordedRunSet::arrange(knobs, 0.05).points[1].label(), std::string("K=200"));
    std::vector<RecordedRun> same{runs[0], runs[0]};
    const SweepData s = RecordedRunSet::arrange(same, 0.05);
    QCOMPARE(s.points.size(), std::size_t(2));
    QVERIFY(!s.paired);
    QCOMPARE(s.points[1].coords[0].first, std::string("file"));
  }
};

QTEST_GUILESS_MAIN(TestSweepAnalysis)
#include "test_sweep_analysis.moc"
