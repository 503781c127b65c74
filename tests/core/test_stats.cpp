// The sweep's statistics on known cases: Wilcoxon signed-rank statistics and p-values computed by
// hand (the small ones) and cross-checked with scipy 1.10 (scipy.stats.wilcoxon, zero_method="wilcox",
// correction=True for the approximation), Student t intervals against scipy.stats.t, the bootstrap's
// determinism, and which test a paired comparison picks.
#include <QtTest>

#include <cmath>
#include <vector>

#include "stats/MeanInterval.h"
#include "stats/PairedBootstrap.h"
#include "stats/PairedComparison.h"
#include "stats/WilcoxonSignedRank.h"

using namespace kvscope;

Q_DECLARE_METATYPE(std::vector<double>)

namespace {
// QCOMPARE prints these by name.
QString str(PairedTest t) { return QString::fromUtf8(toString(t).data(), static_cast<qsizetype>(toString(t).size())); }
QString str(Verdict v) { return QString::fromUtf8(toString(v).data(), static_cast<qsizetype>(toString(v).size())); }
bool near(double a, double b, double tol = 1e-9) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(b)); }
}  // namespace

class TestStats : public QObject {
  Q_OBJECT
 private slots:
  void wilcoxonExact_data() {
    QTest::addColumn<std::vector<double>>("d");
    QTest::addColumn<double>("wplus");
    QTest::addColumn<double>("wminus");
    QTest::addColumn<double>("p");
    // By hand: ranks of |d| are 1..6, the only negative is rank 1: W- = 1, W+ = 20. Of the 64 sign
    // patterns, W+ <= 1 in 2 ({}, {1}), so p = 2 * 2/64 = 0.0625 (scipy: 0.0625).
    QTest::newRow("six, one small negative") << std::vector<double>{1.5, -0.5, 2, 3, 4, 5} << 20.0 << 1.0 << 0.0625;
    // All positive: W- = 0, p = 2 * 1/64 = 0.03125, the smallest p six pairs can give.
    QTest::newRow("six, all positive") << std::vector<double>{1, 2, 3, 4, 5, 6} << 21.0 << 0.0 << 0.03125;
    // By hand: ranks 1,2,3 with rank 1 negative: W+ = 5, W- = 1; P(W+ <= 1) = 2/8, p = 0.5.
    QTest::newRow("three") << std::vector<double>{-1, 2, 3} << 5.0 << 1.0 << 0.5;
    // Darwin's Zea mays data, the scipy.stats.wilcoxon documentation example: W = 24, p = 0.041259765625.
    QTest::newRow("darwin") << std::vector<double>{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75}
                            << 96.0 << 24.0 << 0.041259765625;
    // scipy: statistic 9, p = 0.25.
    QTest::newRow("eight, mixed") << std::vector<double>{0.4, -1.0, 2.2, -3.1, 5.0, 6.3, -0.2, 7.7} << 27.0 << 9.0
                                  << 0.25;
    // Zeros are dropped before ranking (Wilcoxon's convention): the same answer as "six, all positive".
    QTest::newRow("zeros dropped") << std::vector<double>{0, 1, 0, 2, 3, 4, 5, 6} << 21.0 << 0.0 << 0.03125;
  }
  void wilcoxonExact() {
    QFETCH(std::vector<double>, d);
    QFETCH(double, wplus);
    QFETCH(double, wminus);
    QFETCH(double, p);
    const WilcoxonResult r = WilcoxonSignedRank::test(d);
    QVERIFY(r.exact);
    QVERIFY(!r.ties);
    QCOMPARE(r.w_plus, wplus);
    QCOMPARE(r.w_minus, wminus);
    QCOMPARE(r.statistic, std::min(wplus, wminus));
    QVERIFY2(near(r.p_value, p), qPrintable(QString::number(r.p_value, 'g', 17)));
  }

  void wilcoxonZerosCounted() {
    const WilcoxonResult r = WilcoxonSignedRank::test(std::vector<double>{0, 1, 0, 2, 3, 4, 5, 6});
    QCOMPARE(r.n, 6);
    QCOMPARE(r.zeros, 2);
  }

  void wilcoxonPairedOverloadSubtracts() {
    // x - y = {1.5, -0.5, 2, 3, 4, 5}: the "six, one small negative" case.
    const std::vector<double> x{11.5, 9.5, 12, 13, 14, 15}, y(6, 10.0);
    const WilcoxonResult r = WilcoxonSignedRank::test(x, y);
    QCOMPARE(r.w_minus, 1.0);
    QVERIFY(near(r.p_value, 0.0625));
  }

  void wilcoxonTiesUseTheNormalApproximation_data() {
    QTest::addColumn<std::vector<double>>("d");
    QTest::addColumn<double>("statistic");
    QTest::addColumn<double>("p");
    QTest::addColumn<double>("z");
    // Wikipedia's example (x - y of its table): one zero dropped, |5| tied twice. scipy: 18, p = 0.6352893188352069.
    QTest::newRow("wikipedia") << std::vector<double>{15, -7, 5, 20, 0, -9, 17, -12, 5, -10} << 18.0
                               << 0.6352893188352069 << -0.4742953333830018;
    // Three tie groups (|1| x2, |2| x2, |3| x3). scipy: 12.5, p = 0.1378701928033357.
    QTest::newRow("many ties") << std::vector<double>{1, 1, 2, -2, 3, 3, 3, 4, -5, 6} << 12.5 << 0.1378701928033357
                               << -1.4837690792802873;
  }
  void wilcoxonTiesUseTheNormalApproximation() {
    QFETCH(std::vector<double>, d);
    QFETCH(double, statistic);
    QFETCH(double, p);
    QFETCH(double, z);
    const WilcoxonResult r = WilcoxonSignedRank::test(d);
    QVERIFY(r.ties);
    QVERIFY(!r.exact);
    QCOMPARE(r.statistic, statistic);
    QVERIFY2(near(r.p_value, p, 1e-12), qPrintable(QString::number(r.p_value, 'g', 17)));
    QVERIFY2(near(r.z, z, 1e-12), qPrintable(QString::number(r.z, 'g', 17)));
  }

  void wilcoxonAllZero() {
    const WilcoxonResult r = WilcoxonSignedRank::test(std::vector<double>{0, 0, 0, 0, 0, 0, 0});
    QCOMPARE(r.n, 0);
    QCOMPARE(r.zeros, 7);
    QCOMPARE(r.p_value, 1.0);
  }

  void wilcoxonSmallestPValue() {
    QCOMPARE(WilcoxonSignedRank::smallestPValue(5), 0.0625);   // 2/32: never below 0.05
    QCOMPARE(WilcoxonSignedRank::smallestPValue(6), 0.03125);  // 2/64
    QCOMPARE(WilcoxonSignedRank::smallestPValue(0), 1.0);
  }

  void tQuantilesMatchTables() {
    // scipy.stats.t.ppf(0.975, 4), (0.975, 1), (0.975, 29), (0.995, 9); the printed tables say
    // 2.776, 12.706, 2.045, 3.250. Boost and scipy agree to about 1e-10 (for 1 degree of freedom the
    // exact value is tan(0.475 pi) = 12.706204736174694, Boost's; scipy says ...432095).
    QVERIFY(near(MeanInterval::tQuantile(0.95, 4), 2.7764451051977987, 1e-9));
    QVERIFY(near(MeanInterval::tQuantile(0.95, 1), 12.706204736174694, 1e-12));
    QVERIFY(near(MeanInterval::tQuantile(0.95, 29), 2.045229642132703, 1e-9));
    QVERIFY(near(MeanInterval::tQuantile(0.99, 9), 3.2498355440153697, 1e-9));
  }

  void meanIntervalOnKnownData() {
    // 1..5: mean 3, s = sqrt(2.5), half width 2.7764451 * sqrt(2.5) / sqrt(5) = 1.9632431614775607.
    const MeanInterval a = MeanInterval::of(std::vector<double>{1, 2, 3, 4, 5});
    QCOMPARE(a.n, std::size_t(5));
    QCOMPARE(a.mean, 3.0);
    QVERIFY(near(a.stddev, std::sqrt(2.5), 1e-12));
    QVERIFY(near(a.half_width, 1.9632431614775607, 1e-12));
    // scipy.stats.t.interval(0.95, 7, loc=mean, scale=sem): (9.945217532822033, 10.354782467177968).
    const MeanInterval b = MeanInterval::of(std::vector<double>{10.2, 9.8, 10.5, 10.1, 9.9, 10.4, 10.0, 10.3});
    QVERIFY(near(b.low(), 9.945217532822033, 1e-9));
    QVERIFY(near(b.high(), 10.354782467177968, 1e-9));
  }

  void meanIntervalDegenerate() {
    const MeanInterval one = MeanInterval::of(std::vector<double>{4.0});
    QCOMPARE(one.mean, 4.0);
    QVERIFY(!one.hasInterval());
    const MeanInterval none = MeanInterval::of(std::vector<double>{});
    QVERIFY(!none.hasInterval());
    const MeanInterval flat = MeanInterval::of(std::vector<double>{2, 2, 2});
    QVERIFY(flat.hasInterval());
    QCOMPARE(flat.half_width, 0.0);
  }

  void bootstrapIsDeterministicAndSane() {
    const std::vector<double> d{0.8, 1.1, 0.9, 1.3, 1.0};
    const BootstrapResult a = PairedBootstrap::test(d), b = PairedBootstrap::test(d);
    QCOMPARE(a.p_value, b.p_value);
    QCOMPARE(a.ci_low, b.ci_low);
    QVERIFY(near(a.mean_difference, 1.02, 1e-12));
    // Every difference is far from zero: no resample comes near it, p = 1 / (B + 1).
    QVERIFY(near(a.p_value, 1.0 / (PairedBootstrap::kDefaultResamples + 1)));
    QVERIFY(a.ci_low >= 0.8 && a.ci_high <= 1.3 && a.ci_low < a.ci_high);
    // Centred noise: a large p.
    const BootstrapResult c = PairedBootstrap::test(std::vector<double>{-1.0, 1.2, -0.9, 0.8, 0.1});
    QVERIFY2(c.p_value > 0.5, qPrintable(QString::number(c.p_value)));
    QVERIFY(c.ci_low < 0 && c.ci_high > 0);
    // All zero: no difference, p = 1.
    QCOMPARE(PairedBootstrap::test(std::vector<double>{0, 0, 0}).p_value, 1.0);
  }

  void comparisonPicksTheTest() {
    const std::vector<double> base6{10, 10, 10, 10, 10, 10}, better6{9, 8, 7, 6, 5, 4};
    const PairedComparison w = PairedComparison::compare(base6, better6, 0.05);
    QCOMPARE(str(w.test), str(PairedTest::WilcoxonExact));
    QCOMPARE(w.p_value, 0.03125);
    QCOMPARE(str(w.verdict), str(Verdict::Significant));
    QCOMPARE(w.mean_difference, -3.5);
    // At 0.01 six pairs cannot reach the level: the bootstrap answers instead.
    QCOMPARE(str(PairedComparison::compare(base6, better6, 0.01).test), str(PairedTest::Bootstrap));
    // Five pairs at 0.05: the Wilcoxon test never could (p >= 0.0625); the bootstrap answers.
    const std::vector<double> base5{10, 10, 10, 10, 10}, same5{10.5, 9.5, 10.2, 9.9, 10.1};
    const PairedComparison b = PairedComparison::compare(base5, same5, 0.05);
    QCOMPARE(str(b.test), str(PairedTest::Bootstrap));
    QCOMPARE(str(b.verdict), str(Verdict::NotSignificant));
    // Two pairs: nothing to claim.
    const PairedComparison two = PairedComparison::compare(std::vector<double>{1, 2}, std::vector<double>{3, 4}, 0.05);
    QCOMPARE(str(two.verdict), str(Verdict::TooFewSeeds));
    QCOMPARE(str(two.test), str(PairedTest::None));
    QVERIFY(std::isnan(two.p_value));
    // Identical runs: not significant, p = 1.
    const PairedComparison same = PairedComparison::compare(base6, base6, 0.05);
    QCOMPARE(str(same.verdict), str(Verdict::NotSignificant));
    QCOMPARE(same.p_value, 1.0);
  }

  void comparisonRespectsThePairing() {
    // Large seed-to-seed spread, a small but consistent improvement on every seed: only a paired
    // test sees it. Shuffling one side breaks the pairs and the evidence with it.
    const std::vector<double> base{100, 200, 300, 400, 500, 600, 700, 800};
    const std::vector<double> cand{99, 198.5, 298, 397.5, 499.5, 597, 699.2, 796.5};
    const PairedComparison paired = PairedComparison::compare(base, cand, 0.05);
    QCOMPARE(str(paired.test), str(PairedTest::WilcoxonExact));
    QCOMPARE(paired.p_value, 2.0 / 256);
    QCOMPARE(str(paired.verdict), str(Verdict::Significant));
    // scipy: paired p = 0.0078125 (2/256); shuffled p = 0.7421875.
    const std::vector<double> shuffled{796.5, 99, 699.2, 198.5, 597, 298, 499.5, 397.5};
    QCOMPARE(str(PairedComparison::compare(base, shuffled, 0.05).verdict), str(Verdict::NotSignificant));
  }
};

QTEST_GUILESS_MAIN(TestStats)
#include "test_stats.moc"
