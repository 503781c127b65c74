// The sweep's statistics on known cases, against scipy 1.10 (python3-scipy; the call and its value in
// each comment, this test does not need scipy): the exact and sampled sign-flip test, Wilcoxon
// signed-rank (exact, exact with ties, approximated), Student t and log-scale intervals, the
// bootstrap interval's determinism, and what a paired comparison lets a report claim.
#include <QtTest>

#include <cmath>
#include <vector>

#include "core/stats/MeanInterval.h"
#include "core/stats/PairedBootstrap.h"
#include "core/stats/PairedComparison.h"
#include "core/stats/SignFlipTest.h"
#include "core/stats/WilcoxonSignedRank.h"

using namespace kvscope;

Q_DECLARE_METATYPE(std::vector<double>)

namespace {
// QCOMPARE prints these by name.
QString str(PairedTest t) { return QString::fromUtf8(toString(t).data(), static_cast<qsizetype>(toString(t).size())); }
QString str(Verdict v) { return QString::fromUtf8(toString(v).data(), static_cast<qsizetype>(toString(v).size())); }
QString str(MeanInterval::Scale s) {
  return QString::fromUtf8(toString(s).data(), static_cast<qsizetype>(toString(s).size()));
}
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
    QTest::newRow("darwin") << std::vector<double>{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75} << 96.0
                            << 24.0 << 0.041259765625;
    // scipy: statistic 9, p = 0.25.
    QTest::newRow("eight, mixed") << std::vector<double>{0.4, -1.0, 2.2, -3.1, 5.0, 6.3, -0.2, 7.7} << 27.0 << 9.0
                                  << 0.25;
    // Zeros are dropped before ranking (Wilcoxon's convention): the same answer as "six, all positive".
    // scipy.stats.wilcoxon(d) (zero_method="wilcox") on these 8 -> 0.027707849358079864 by the normal
    // approximation, which zeros force in scipy 1.10; on the 6 non-zero ones -> 0.03125, what we give.
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

  void wilcoxonTiesAreExactBySignPatterns_data() {
    QTest::addColumn<std::vector<double>>("d");
    QTest::addColumn<double>("statistic");
    QTest::addColumn<double>("p");
    // Wikipedia's example (x - y of its table): one zero dropped, |5| tied twice. Every sign pattern
    // of the 9 average ranks:
    // r = rankdata(abs(d)) * sign(d) (zero dropped);
    // scipy.stats.permutation_test((r,), np.sum, permutation_type="samples", n_resamples=np.inf) -> p=0.6328125
    // (scipy.stats.wilcoxon's approximation says 0.6352893188352069, its "exact" ignores the ties).
    QTest::newRow("wikipedia") << std::vector<double>{15, -7, 5, 20, 0, -9, 17, -12, 5, -10} << 18.0 << 0.6328125;
    // Three tie groups (|1| x2, |2| x2, |3| x3), the same scipy call -> p=0.13671875.
    QTest::newRow("many ties") << std::vector<double>{1, 1, 2, -2, 3, 3, 3, 4, -5, 6} << 12.5 << 0.13671875;
  }
  void wilcoxonTiesAreExactBySignPatterns() {
    QFETCH(std::vector<double>, d);
    QFETCH(double, statistic);
    QFETCH(double, p);
    const WilcoxonResult r = WilcoxonSignedRank::test(d);
    QVERIFY(r.ties);
    QVERIFY(r.exact);
    QCOMPARE(r.statistic, statistic);
    QVERIFY2(near(r.p_value, p, 1e-12), qPrintable(QString::number(r.p_value, 'g', 17)));
  }

  void wilcoxonManyTiedPairsUseTheNormalApproximation() {
    // 25 pairs with ties: past kExactTiesMaxN, so the tie-corrected normal approximation.
    // scipy.stats.wilcoxon(d, method="approx", correction=True) -> statistic=20.5, p=0.0001395006445550726
    const std::vector<double> d{1, 2, 2, 3, -1, 4, 5, 5, 6, -2, 7, 8, 8, 9, 10, -3, 11, 12, 12, 13, 14, 15, -4, 16, 17};
    const WilcoxonResult r = WilcoxonSignedRank::test(d);
    QVERIFY(r.ties);
    QVERIFY(!r.exact);
    QCOMPARE(r.statistic, 20.5);
    QVERIFY2(near(r.p_value, 0.0001395006445550726, 1e-12), qPrintable(QString::number(r.p_value, 'g', 17)));
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

  void signFlipExact_data() {
    QTest::addColumn<std::vector<double>>("d");
    QTest::addColumn<double>("p");
    QTest::addColumn<int>("n");
    // Each: scipy.stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf).pvalue
    QTest::newRow("n=3, one sign") << std::vector<double>{0.5, 1.2, 0.8} << 0.25 << 3;                    // -> 0.25
    QTest::newRow("n=6, one sign") << std::vector<double>{0.5, 1.2, 0.8, 2.0, 0.1, 0.3} << 0.03125 << 6;  // -> 0.03125
    QTest::newRow("n=6, one small negative") << std::vector<double>{1.5, -0.5, 2, 3, 4, 5} << 0.0625 << 6;  // -> 0.0625
    QTest::newRow("n=8, mixed") << std::vector<double>{0.4, -1.0, 2.2, -3.1, 5.0, 6.3, -0.2, 7.7} << 0.171875
                                << 8;  // -> 0.171875
    QTest::newRow("n=10, mixed") << std::vector<double>{2.1, -0.3, 1.7, 0.9, -1.2, 3.3, 0.4, 1.1, -0.6, 2.5}
                                 << 0.06640625 << 10;  // -> 0.06640625
    // Tied |d| are no problem for a permutation test of the mean: -> 0.16796875.
    QTest::newRow("ties") << std::vector<double>{1, 1, 2, -2, 3, 3, 3, 4, -5, 6} << 0.16796875 << 10;
    // Zeros: scipy with them kept -> 0.0625, the same as without them (a flipped 0 is still 0); we drop
    // them as zero_method="wilcox" does, and n counts the 6 that differ.
    QTest::newRow("zeros") << std::vector<double>{0, 1.5, -0.5, 0, 2, 3, 4, 5} << 0.0625 << 6;
    QTest::newRow("sum zero") << std::vector<double>{1, -1} << 1.0 << 2;  // every pattern as extreme
  }
  void signFlipExact() {
    QFETCH(std::vector<double>, d);
    QFETCH(double, p);
    QFETCH(int, n);
    const SignFlipResult r = SignFlipTest::test(d);
    QVERIFY(r.exact);
    QCOMPARE(r.n, n);
    QCOMPARE(r.zeros, static_cast<int>(d.size()) - n);
    QCOMPARE(r.patterns, 1LL << n);
    QVERIFY2(near(r.p_value, p, 1e-12), qPrintable(QString::number(r.p_value, 'g', 17)));
    QVERIFY(r.p_value >= SignFlipTest::smallestPValue(n));
  }

  void signFlipSampledBeyondTwentyPairs() {
    // 22 pairs: sampled, deterministic, and close to the exact p. The exact value, all 2^22 patterns
    // counted by meet in the middle in numpy: 419950 / 4194304 = 0.10012388229370117; scipy's own
    // sample, permutation_test(..., n_resamples=100000, random_state=7) -> 0.1013589864101359.
    const std::vector<double> d{0.8, -1.1, 0.3,  1.9, -0.4, 0.7,  1.2, -0.9, 0.5,  0.2, -1.4,
                                1.6, 0.9,  -0.2, 0.6, 1.1,  -0.7, 0.4, 1.3,  -0.5, 0.1, 0.85};
    const SignFlipResult a = SignFlipTest::test(d), b = SignFlipTest::test(d);
    QVERIFY(!a.exact);
    QCOMPARE(a.n, 22);
    QCOMPARE(a.patterns, static_cast<long long>(SignFlipTest::kSamples));
    QCOMPARE(a.p_value, b.p_value);  // a fixed seed: the same data, the same p
    // 4 standard errors of a 100,000-pattern estimate at p = 0.1: 4 * sqrt(0.1 * 0.9 / 1e5) = 0.0038.
    QVERIFY2(std::abs(a.p_value - 0.10012388229370117) < 0.0038, qPrintable(QString::number(a.p_value, 'g', 17)));
    // One sign on 25 pairs: no sampled pattern is as extreme but the observed one, p = 1 / (B + 1).
    const std::vector<double> pos(25, 1.0);
    QCOMPARE(SignFlipTest::test(pos).p_value, 1.0 / (SignFlipTest::kSamples + 1));
  }

  void smallestPAndSeedsNeeded() {
    QCOMPARE(SignFlipTest::smallestPValue(3), 0.25);
    QCOMPARE(SignFlipTest::smallestPValue(5), 0.0625);
    QCOMPARE(SignFlipTest::smallestPValue(6), 0.03125);
    QCOMPARE(SignFlipTest::smallestPValue(0), 1.0);
    QCOMPARE(SignFlipTest::pairsNeeded(0.05), 6);
    QCOMPARE(SignFlipTest::pairsNeeded(0.01), 8);    // 2/128 = 0.0156 is not below 0.01, 2/256 is
    QCOMPARE(SignFlipTest::pairsNeeded(0.0625), 6);  // p < level: 5 pairs' floor 0.0625 is not enough
  }

  void positiveIntervalNeverBelowZero() {
    // Three skewed latencies. mean 1.7, SE = std(ddof=1)/sqrt(3), t = scipy.stats.t.ppf(0.975, 2):
    // Student: 1.7 - t*SE = -3.323857611541518 (below zero); log scale: 1.7 * exp(-+ t*SE/1.7) ->
    // [0.08851510100777803, 32.6497961036733].
    const std::vector<double> v{0.2, 0.9, 4.0};
    QVERIFY(near(MeanInterval::of(v).low(), -3.323857611541518, 1e-9));
    const MeanInterval m = MeanInterval::ofPositive(v);
    QCOMPARE(str(m.scale), QString("log scale"));
    QCOMPARE(m.mean, 1.7);
    QVERIFY2(near(m.low(), 0.08851510100777803, 1e-9), qPrintable(QString::number(m.low(), 'g', 17)));
    QVERIFY2(near(m.high(), 32.6497961036733, 1e-9), qPrintable(QString::number(m.high(), 'g', 17)));
    // Never below zero, always around the mean, over samples from tight to wild, with zeros too.
    const std::vector<std::vector<double>> samples{{10.0, 10.1, 9.9}, {0.001, 5, 0.002},     {0, 0, 3},
                                                   {1e-9, 1e3},       {0.3, 0.3, 0.3, 0.31}, {7, 0, 0, 0, 0, 0}};
    for (const auto& s : samples) {
      const MeanInterval i = MeanInterval::ofPositive(s);
      QVERIFY(i.hasInterval());
      QVERIFY2(i.low() >= 0 && i.low() <= i.mean && i.mean <= i.high(), qPrintable(QString::number(i.low())));
    }
    // Tight data: within 1% of the Student interval.
    const MeanInterval tight = MeanInterval::ofPositive(std::vector<double>{10.0, 10.1, 9.9, 10.05});
    QVERIFY(std::abs(tight.low() - MeanInterval::of(std::vector<double>{10.0, 10.1, 9.9, 10.05}).low()) < 0.01 * 10);
    // All zero: the interval is the point 0; a negative value is a caller's bug.
    const MeanInterval zero = MeanInterval::ofPositive(std::vector<double>{0, 0, 0});
    QCOMPARE(zero.low(), 0.0);
    QCOMPARE(zero.high(), 0.0);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, MeanInterval::ofPositive(std::vector<double>{1, -1}));
  }

  void bootstrapIntervalIsDeterministicAndSane() {
    const std::vector<double> d{0.8, 1.1, 0.9, 1.3, 1.0, 0.7, 1.2, 0.95, 1.05, 0.85};
    const BootstrapInterval a = PairedBootstrap::interval(d), b = PairedBootstrap::interval(d);
    QCOMPARE(a.ci_low, b.ci_low);
    QCOMPARE(a.ci_high, b.ci_high);
    QVERIFY(near(a.mean_difference, 0.985, 1e-12));
    QVERIFY(a.ci_low >= 0.7 && a.ci_high <= 1.3 && a.ci_low < a.mean_difference && a.mean_difference < a.ci_high);
    const BootstrapInterval c =
        PairedBootstrap::interval(std::vector<double>{-1.0, 1.2, -0.9, 0.8, 0.1, -0.3, 0.5, -0.6, 0.2, 0.0});
    QVERIFY(c.ci_low < 0 && c.ci_high > 0);
    const BootstrapInterval flat = PairedBootstrap::interval(std::vector<double>{0.5, 0.5, 0.5});
    QCOMPARE(flat.ci_low, 0.5);
    QCOMPARE(flat.ci_high, 0.5);
  }

  void comparisonSaysOnlyWhatTheSeedsSupport() {
    // Three seeds, one sign: the bootstrap used to say "significant, p=0.0001"; the exact test cannot
    // go below 2/8 = 0.25 (scipy.stats.permutation_test as above -> 0.25, scipy.stats.wilcoxon -> 0.25).
    const std::vector<double> base3{10, 11, 12}, better3{9, 9.5, 10.7};
    const PairedComparison three = PairedComparison::compare(base3, better3, 0.05);
    QCOMPARE(str(three.test), str(PairedTest::SignFlipExact));
    QCOMPARE(three.pairs, 3);
    QCOMPARE(three.p_value, 0.25);
    QCOMPARE(three.smallest_p, 0.25);
    QCOMPARE(three.wilcoxon_p, 0.25);
    QCOMPARE(str(three.verdict), str(Verdict::NeedsMoreSeeds));
    QCOMPARE(QString::fromStdString(three.verdictText()), QString("needs >= 6 seeds"));
    QVERIFY(!three.difference_ci);  // 3 pairs: no bootstrap interval
    QCOMPARE(QString::fromStdString(three.summary()),
             QString("n=3 pairs, sign-flip (exact, 8 patterns): p=0.25 (smallest possible 0.25 with 3 pairs), "
                     "Wilcoxon p=0.25 -> needs >= 6 seeds at level 0.05"));
    // Six seeds, one sign: 2/64 = 0.03125 (both scipy calls -> 0.03125), significant.
    const std::vector<double> base6{10, 10, 10, 10, 10, 10}, better6{9, 8, 7, 6, 5, 4};
    const PairedComparison six = PairedComparison::compare(base6, better6, 0.05);
    QCOMPARE(six.p_value, 0.03125);
    QCOMPARE(str(six.verdict), str(Verdict::Significant));
    QCOMPARE(six.mean_difference, -3.5);
    // At 0.01 six pairs cannot reach the level: 8 are needed.
    QCOMPARE(QString::fromStdString(PairedComparison::compare(base6, better6, 0.01).verdictText()),
             QString("needs >= 8 seeds"));
    // One seed tied: five pairs differ, and five cannot reach 0.05.
    const std::vector<double> tied{9, 8, 10, 6, 5, 4};
    const PairedComparison t = PairedComparison::compare(base6, tied, 0.05);
    QCOMPARE(t.differing, 5);
    QCOMPARE(t.smallest_p, 0.0625);
    QCOMPARE(QString::fromStdString(t.verdictText()), QString("needs >= 6 seeds that differ (5 of 6 do)"));
    // Two pairs, opposite ways: still no claim, and the text says how many it needs.
    const PairedComparison two = PairedComparison::compare(std::vector<double>{1, 2}, std::vector<double>{3, 1}, 0.05);
    QCOMPARE(str(two.verdict), str(Verdict::NeedsMoreSeeds));
    // No pairs at all (a metric one side never had): no claim, and the text says why.
    const PairedComparison none = PairedComparison::compare(std::vector<double>{}, std::vector<double>{}, 0.05);
    QCOMPARE(str(none.verdict), str(Verdict::NeedsMoreSeeds));
    QCOMPARE(QString::fromStdString(none.verdictText()), QString("no pairs (a side has no value)"));
    // Identical runs: nothing differs, p = 1, not significant (more seeds like these would not change it).
    const PairedComparison same = PairedComparison::compare(base6, base6, 0.05);
    QCOMPARE(str(same.verdict), str(Verdict::NotSignificant));
    QCOMPARE(same.p_value, 1.0);
    QCOMPARE(str(same.test), str(PairedTest::None));
  }

  void comparisonHasABootstrapIntervalFromTenPairs() {
    std::vector<double> base(10, 10.0), cand{9.1, 9.4, 8.8, 9.9, 9.0, 9.3, 9.6, 8.7, 9.2, 9.5};
    const PairedComparison c = PairedComparison::compare(base, cand, 0.05);
    QVERIFY(c.difference_ci.has_value());
    QVERIFY(c.difference_ci->ci_low < c.mean_difference && c.mean_difference < c.difference_ci->ci_high);
    QVERIFY(c.difference_ci->ci_high < 0);
    base.pop_back();
    cand.pop_back();
    QVERIFY(!PairedComparison::compare(base, cand, 0.05).difference_ci.has_value());
  }

  void comparisonSampledBeyondTwentyPairs() {
    std::vector<double> base(25, 10.0), cand(25, 9.0);
    const PairedComparison c = PairedComparison::compare(base, cand, 0.05);
    QCOMPARE(str(c.test), str(PairedTest::SignFlipSampled));
    QVERIFY(QString::fromStdString(c.testText()).contains("100000 sampled patterns, seed 20240601"));
    QCOMPARE(str(c.verdict), str(Verdict::Significant));
  }

  void comparisonRespectsThePairing() {
    // Large seed-to-seed spread, a small but consistent improvement on every seed: only a paired
    // test sees it. Shuffling one side breaks the pairs and the evidence with it.
    const std::vector<double> base{100, 200, 300, 400, 500, 600, 700, 800};
    const std::vector<double> cand{99, 198.5, 298, 397.5, 499.5, 597, 699.2, 796.5};
    const PairedComparison paired = PairedComparison::compare(base, cand, 0.05);
    QCOMPARE(str(paired.test), str(PairedTest::SignFlipExact));
    QCOMPARE(paired.p_value, 2.0 / 256);
    QCOMPARE(str(paired.verdict), str(Verdict::Significant));
    // scipy.stats.wilcoxon: paired p = 0.0078125 (2/256); shuffled p = 0.7421875.
    const std::vector<double> shuffled{796.5, 99, 699.2, 198.5, 597, 298, 499.5, 397.5};
    const PairedComparison broken = PairedComparison::compare(base, shuffled, 0.05);
    QCOMPARE(str(broken.verdict), str(Verdict::NotSignificant));
    QVERIFY(near(broken.wilcoxon_p, 0.7421875));
  }
};

QTEST_GUILESS_MAIN(TestStats)
#include "test_stats.moc"
