// From runs to tables, on hand-made summaries: intervals across seeds, the change against the
// baseline, the paired test on the seeds both points ran (a missing run drops only its pair), the
// per-D bindings, the two-policy table, the three output formats, and recordings grouped into points.
#include <QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/sweep/RecordedRunSet.h"
#include "core/sweep/SweepAnalysis.h"
#include "core/sweep/SweepReport.h"

using namespace kvscope;

namespace {

// QCOMPARE prints these by name.
QString str(PairedTest t) { return QString::fromUtf8(toString(t).data(), static_cast<qsizetype>(toString(t).size())); }
QString str(Verdict v) { return QString::fromUtf8(toString(v).data(), static_cast<qsizetype>(toString(v).size())); }
QString str(MeanInterval::Scale s) {
  return QString::fromUtf8(toString(s).data(), static_cast<qsizetype>(toString(s).size()));
}

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
    QCOMPARE(str(other.comparison->test), str(PairedTest::SignFlipExact));
    QCOMPARE(other.comparison->p_value, 0.03125);  // 6 of 6 seeds better: 2/2^6
    QCOMPARE(other.comparison->wilcoxon_p, 0.03125);
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
    QCOMPARE(str(a.cells[1][m].comparison->test), str(PairedTest::SignFlipExact));
    QCOMPARE(str(a.cells[1][m].comparison->verdict), str(Verdict::NeedsMoreSeeds));  // 5 pairs cannot reach 0.05
    QCOMPARE(a.runs_done[1], std::size_t(5));
  }

  // A sweep with no point (an empty grid, a directory read back bare) still reports, and says so.
  void aSweepWithNoPointReports() {
    SweepData d;
    d.scenario = "e2-cold-d";
    const SweepAnalysis a = SweepAnalysis::of(d);
    const SweepReport r(d, a);
    QVERIFY(QString::fromStdString(r.markdown()).contains("- points: 0; baseline: none"));
    QCOMPARE(QString::fromStdString(r.json()["baseline"].get<std::string>()), QString("none"));
    QVERIFY(r.json()["points"].empty());
    QVERIFY(!r.csv().empty());
  }

  void tooFewSeedsIsSaid() {
    const SweepData d = twoPolicies(2);
    const SweepAnalysis a = SweepAnalysis::of(d);
    const std::size_t m = a.metricIndex("e2e_mean_s");
    QCOMPARE(str(a.cells[1][m].comparison->verdict), str(Verdict::NeedsMoreSeeds));
    const SweepReport r(d, a);
    QVERIFY(QString::fromStdString(r.markdown()).contains("| needs >= 6 seeds |"));
    QCOMPARE(
        QString::fromStdString(r.json()["points"][1]["metrics"]["e2e_mean_s"]["test"]["verdict"].get<std::string>()),
        QString("needs more seeds"));
  }

  // The case: 3 seeds, every one better. A bootstrap said "significant, p=0.0001"; three
  // pairs can give no p below 2/8 = 0.25 (scipy.stats.permutation_test((d,), np.mean,
  // permutation_type="samples", n_resamples=np.inf) -> 0.25; scipy.stats.wilcoxon(d) -> 0.25).
  void threeSeedsOfOneSignNeedSixSeeds() {
    const SweepData d = twoPolicies(3);
    const SweepAnalysis a = SweepAnalysis::of(d);
    const SweepReport r(d, a);
    const QString md = QString::fromStdString(r.markdown());
    QVERIFY2(!md.contains("| significant |"), qPrintable(md));
    // E2E mean: the point, pairs, test, p, smallest p, Wilcoxon p, verdict.
    QVERIFY2(
        md.contains("| policy=unified | 3 | 10.010 [") &&
            md.contains("| -9.0% | 3 | sign-flip (exact, 8 patterns) | 0.250 | 0.250 | 0.250 | needs >= 6 seeds |"),
        qPrintable(md));
    QVERIFY(md.contains("a verdict needs >= 6 differing pairs"));
    const nlohmann::json t = r.json()["points"][1]["metrics"]["e2e_mean_s"]["test"];
    // The fields other code reads are still there, with the same names.
    QCOMPARE(t["pairs"].get<int>(), 3);
    QCOMPARE(t["p_value"].get<double>(), 0.25);
    QCOMPARE(QString::fromStdString(t["name"].get<std::string>()), QString("sign-flip (exact)"));
    QCOMPARE(t["smallest_p"].get<double>(), 0.25);
    QCOMPARE(t["seeds_needed"].get<int>(), 6);
    QCOMPARE(QString::fromStdString(t["verdict_text"].get<std::string>()), QString("needs >= 6 seeds"));
    QVERIFY(t["difference_ci95"].is_null());
    const nlohmann::json row = r.json()["two_policy"]["rows"][0];
    QCOMPARE(QString::fromStdString(row["verdict"].get<std::string>()), QString("needs more seeds"));
    QCOMPARE(row["test"]["smallest_p"].get<double>(), 0.25);
    const QStringList csv = QString::fromStdString(r.csv()).split('\n', Qt::SkipEmptyParts);
    QVERIFY(csv[0].endsWith(
        ",level,ci_scale,pairs,differing,smallest_p,wilcoxon_p,seeds_needed,verdict_text,diff_ci_low,diff_ci_high"));
  }

  void aMetricTheBaselineNeverHadHasNoPairs() {
    // Token imbalance is undefined while a worker served nothing: the baseline has no value on any seed.
    SweepData d = twoPolicies(6);
    for (auto& run : d.runs[0]) run->token_imbalance.reset();
    const SweepAnalysis a = SweepAnalysis::of(d);
    const std::size_t m = a.metricIndex("token_imbalance");
    QCOMPARE(a.cells[1][m].comparison->pairs, 0);
    const QString md = QString::fromStdString(SweepReport(d, a).markdown());
    QVERIFY2(
        md.contains("| policy=unified | 6 | 2.000x [2.000x, 2.000x] | n/a (no baseline value) | 0 | - | - | - | - | "
                    "no pairs (a side has no value) |"),
        qPrintable(md));
  }

  void intervalsOfPositiveMetricsStayAboveZero() {
    // E2E mean 0.1, 0.1, 5 s over three seeds: a Student interval would reach -5.9 s.
    SweepData d = twoPolicies(3);
    d.runs[0][0]->e2e_s.mean = 0.1;
    d.runs[0][1]->e2e_s.mean = 0.1;
    d.runs[0][2]->e2e_s.mean = 5.0;
    const SweepAnalysis a = SweepAnalysis::of(d);
    for (const auto& point : a.cells)
      for (const MetricCell& c : point)
        if (c.interval.hasInterval()) {
          QCOMPARE(str(c.interval.scale), QString("log scale"));
          QVERIFY(c.interval.low() >= 0);
        }
    const MetricCell& c = a.cells[0][a.metricIndex("e2e_mean_s")];
    QVERIFY(MeanInterval::of(c.values).low() < -5);
    QVERIFY(c.interval.low() > 0);
    const nlohmann::json j = SweepReport(d, a).json()["points"][0]["metrics"]["e2e_mean_s"];
    QVERIFY(j["ci95_low"].get<double>() > 0);
    QCOMPARE(QString::fromStdString(j["ci95_scale"].get<std::string>()), QString("log scale"));
  }

  void formats() {
    const SweepData d = twoPolicies(3);
    const SweepAnalysis a = SweepAnalysis::of(d);
    const SweepReport r(d, a);
    const QString md = QString::fromStdString(r.markdown());
    QVERIFY(md.contains("## unified vs lmetric"));
    QVERIFY(md.contains("| E2E mean (s) | 11.000 [8.776, 13.787] | "));  // lmetric over seeds 1..3: 10, 11, 12
    QVERIFY(md.contains("## Per-D bindings"));
    QVERIFY(md.contains("| policy=unified | 60.0 | 60.0% | 10.0 | 40.0 | 40.0% | 8.0 |"));
    const QStringList csv = QString::fromStdString(r.csv()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(csv.size(), 1 + 2 * static_cast<int>(a.metrics.size()));
    QVERIFY(csv[0].startsWith("point,policy,metric,runs,mean,ci_low,ci_high,change_pct,test,p_value,verdict"));
    const nlohmann::json j = r.json();
    QCOMPARE(j["two_policy"]["rows"].size(), std::size_t(5));
    QCOMPARE(j["points"][0]["metrics"]["e2e_mean_s"]["mean"].get<double>(), 11.0);
    // Log scale: 11 * exp(t * SE / 11), t = scipy.stats.t.ppf(0.975, 2), SE = 1 / sqrt(3) -> 13.786997996550284
    // (the Student interval's 13.484137657 is 11 + t * SE).
    QVERIFY(std::abs(j["points"][0]["metrics"]["e2e_mean_s"]["ci95_high"].get<double>() - 13.786997996550284) < 1e-6);
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
