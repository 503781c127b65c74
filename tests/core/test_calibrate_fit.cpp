// calibrate fit's core: the target file (its metrics, values, shares, and
// file:line of broken JSON), the fit parameters (names, ranges, what they edit in the scenario), the
// scenario loader accepting a calibrated scenario, and the fit itself: a target made by the twin at
// output_scale = 1.3 is recovered from the scenario's own 1.0 within 0.15, and a parameter that no
// target metric depends on is flagged by the sensitivity. Short runs (300-600 simulated s, 2 seeds).
#include <QtTest>

#include <QTemporaryDir>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/calibration/CalibrationCheck.h"
#include "core/calibration/CalibrationTarget.h"
#include "core/calibration/FitParameter.h"
#include "core/calibration/ScenarioFitter.h"
#include "core/model/Error.h"
#include "core/scenario/Scenario.h"

using namespace kvscope;
using nlohmann::json;

namespace {

std::string writeFile(const QTemporaryDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
  std::ofstream(path) << text;
  return path;
}

// The message of the InputError `f` throws ("" when it throws nothing).
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

class TestCalibrateFit : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void targetTableAndReport() {
    const auto t = CalibrationTarget::load(writeFile(
        tmp_, "t.json",
        "// measured\n{\"source\": \"lab\", \"policies\": {\"linear\": {\"ttft_p90_s\": 16.058, \"token_imbalance\": "
        "2.7},\n"
        " \"e3\": {\"policy\": \"kv-aware\", \"knobs\": {\"K\": 200}, \"decode_shares\": [0.24, 0.535, 0.225]}}}\n"));
    QCOMPARE(t.rows.size(), std::size_t{2});
    const TargetRow* e3 = t.row("e3");
    QVERIFY(e3);
    QCOMPARE(e3->policy, std::string("kv-aware"));
    QCOMPARE(e3->knobs.at("K"), 200.0);
    QCOMPARE(e3->decode_shares.size(), std::size_t{3});
    QCOMPARE(t.row("linear")->metrics.at("ttft_p90_s"), 16.058);
    // The table form reads back the same.
    const auto again = CalibrationTarget::fromJson(t.toJson(), "again");
    QCOMPARE(again.toJson(), t.toJson());

    // A report --format json of a run: one row, its policy.
    RunSummary run;
    run.policy = "lmetric";
    run.e2e_s = {18.2, 6.1, 39.4, 80, 100};
    run.ttft_s = {3, 1, 9.3, 20, 100};
    run.token_imbalance = 2.4;
    run.workers = {{"D0", "unified", 10, 0.5}, {"D1", "unified", 10, 0.5}};
    const auto r = CalibrationTarget::fromJson(run.toJson(), "report.json");
    QCOMPARE(r.rows.size(), std::size_t{1});
    QCOMPARE(r.rows[0].policy, std::string("lmetric"));
    QCOMPARE(r.rows[0].metrics.at("e2e_p90_s"), 39.4);
    QCOMPARE(r.rows[0].metrics.at("token_imbalance"), 2.4);
    QCOMPARE(r.rows[0].decode_shares, (std::vector<double>{0.5, 0.5}));
  }

  void targetErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown metric") << R"({"policies": {"linear": {"ttft_p95_s": 3}}})"
                                    << "policies.linear.ttft_p95_s': unknown metric";
    QTest::newRow("zero value") << R"({"policies": {"linear": {"ttft_p90_s": 0}}})"
                                << "expected a measured value > 0";
    QTest::newRow("negative value") << R"({"policies": {"linear": {"e2e_p90_s": -2}}})"
                                    << "expected a measured value > 0";
    QTest::newRow("unknown policy") << R"({"policies": {"fastest": {"e2e_p90_s": 2}}})"
                                    << "unknown policy \"fastest\"";
    QTest::newRow("percent shares") << R"({"policies": {"linear": {"decode_shares": [46.7, 53.3]}}})"
                                    << "expected shares in [0, 1]";
    QTest::newRow("shares not summing") << R"({"policies": {"linear": {"decode_shares": [0.5, 0.2]}}})"
                                        << "add up to";
    QTest::newRow("empty row") << R"({"policies": {"linear": {}}})"
                               << "no metric to reproduce";
    QTest::newRow("no policies") << R"({"source": "x"})"
                                 << "field 'policies'";
    QTest::newRow("bad knob") << R"({"policies": {"linear": {"knobs": {"K": -5}, "e2e_p90_s": 2}}})"
                              << "policies.linear.knobs.K";
    QTest::newRow("broken JSON, line 3") << "{\n  \"policies\": {\n    \"linear\": {\"e2e_p90_s\": 2,}\n  }\n}"
                                         << "t-bad.json:3:";
  }
  void targetErrors() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const std::string path = writeFile(tmp_, "t-bad.json", text.toStdString());
    const std::string error = errorOf([&] { CalibrationTarget::load(path); });
    QVERIFY2(error.find(expected.toStdString()) != std::string::npos, error.c_str());
  }

  void parameterErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown") << "speed=1:2"
                             << "unknown parameter 'speed'";
    QTest::newRow("empty range") << "output_scale=2:2"
                                 << "empty range";
    QTest::newRow("reversed") << "sessions=40:20"
                              << "empty range";
    QTest::newRow("scale at 0") << "context_scale=0:2"
                                << "must stay in (0, 100]";
    QTest::newRow("sessions 0") << "sessions=0:10"
                                << "must stay in [1, 100000]";
    QTest::newRow("knob range") << "knob.K=-1:10"
                                << "must stay in";
    QTest::newRow("unknown knob") << "knob.nosuch=0:1"
                                  << "unknown knob 'nosuch'";
    QTest::newRow("no colon") << "output_scale=2"
                              << "expected NAME=LO:HI";
    QTest::newRow("not a number") << "output_scale=a:2"
                                  << "must be numbers";
  }
  void parameterErrors() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const std::string error = errorOf([&] { FitParameter::parse(text.toStdString()); });
    QVERIFY2(error.find(expected.toStdString()) != std::string::npos, error.c_str());
  }

  // Each parameter edits what it says, and the edited JSON (with a "calibration" record) loads.
  void parametersEditTheScenario() {
    const std::string file = Scenario::resolve("unified-vs-lmetric");
    json j = Scenario::readJson(file);
    const Scenario base = Scenario::fromJson(j, file);
    FitParameter::parse("context_scale=0.5:2").apply(j, 2.0);
    FitParameter::parse("output_scale=0.5:2").apply(j, 1.5);
    FitParameter::parse("sessions=8:64").apply(j, 40.4);
    FitParameter::parse("knob.overload_factor=1:4").apply(j, 3.0);
    j["calibration"] = {{"note", "a record only"}};
    const Scenario s = Scenario::fromJson(j, file);
    const auto& g = s.workload.synthetic;
    const auto& b = base.workload.synthetic;
    QCOMPARE(g.first_turn_tokens.a, 2 * b.first_turn_tokens.a);
    QCOMPARE(g.first_turn_tokens.max, 2 * b.first_turn_tokens.max);
    QCOMPARE(g.new_tokens.b, 2 * b.new_tokens.b);
    QCOMPARE(g.output_tokens.a, 1.5 * b.output_tokens.a);
    QCOMPARE(g.think_s.a, b.think_s.a);
    QCOMPARE(g.sessions, 40);
    QCOMPARE(s.knobs.at("overload_factor"), 3.0);
    QCOMPARE(FitParameter::parse("sessions=8:64").current(Scenario::readJson(file)), 32.0);
    QCOMPARE(FitParameter::parse("think_scale=0.5:2").current(j), 1.0);
    // Any other unknown key is still refused.
    j["calibrations"] = 1;
    QVERIFY(errorOf([&] { Scenario::fromJson(j, file); }).find("unknown field") != std::string::npos);
  }

  // The twin at output_scale = 1.3 makes the target; the fit starts from the scenario's 1.0.
  void selfConsistencyRecoversOutputScale() {
    const std::vector<std::uint64_t> seeds{1, 2};
    const double duration = 600;
    CalibrationTarget truth;
    truth.file = "generated";
    truth.rows.push_back(TargetRow{"lmetric", "lmetric", {}, {{"e2e_mean_s", 1}, {"e2e_p50_s", 1}}, {}});
    FitOptions o;
    o.params = {FitParameter::parse("output_scale=0.5:2.5")};
    o.seeds = seeds;
    o.duration_s = duration;
    o.max_evaluations = 16;
    o.sensitivity = false;
    {
      const ScenarioFitter maker("unified-vs-lmetric", truth, o);
      const auto runs =
          CandidateRuns(seeds, duration, 0).run(maker.candidate({1.3}), truth.rows, std::atomic<bool>{false});
      for (auto& [metric, value] : truth.rows[0].metrics) value = meanOf(runs[0].metric(metric));
    }
    ScenarioFitter fitter("unified-vs-lmetric", truth, o);
    const FitResult r = fitter.run(std::atomic<bool>{false});
    QCOMPARE(r.start[0], 1.0);
    qInfo("fitted output_scale %.3f (truth 1.3, start 1.0) after %d evaluations, objective %.3g", r.values[0],
          r.evaluations, r.objective);
    QVERIFY2(std::abs(r.values[0] - 1.3) <= 0.15,
             qPrintable(QString("fitted output_scale %1, objective %2 after %3 evaluations")
                            .arg(r.values[0])
                            .arg(r.objective)
                            .arg(r.evaluations)));
    QVERIFY(r.evaluations <= 16);
    QVERIFY(!r.stopped_early);
    for (const auto& e : r.errors) QVERIFY2(std::abs(e.relative()) < 0.05, e.metric.c_str());
    // The calibrated scenario carries the value and loads.
    const json cal = fitter.calibratedScenario(r, "self");
    QCOMPARE(cal["calibration"]["parameters"]["output_scale"]["value"].get<double>(), r.values[0]);
    QCOMPARE(cal["duration_s"].get<double>(), duration);
    const Scenario s = Scenario::fromJson(cal, fitter.scenarioFile());
    QCOMPARE(s.name, std::string("self"));
  }

  // K is read by kv-aware only: a target of linear does not depend on it.
  void parameterWithoutEffectIsFlagged() {
    CalibrationTarget t;
    t.file = "t";
    t.rows.push_back(TargetRow{"linear", "linear", {}, {{"e2e_p90_s", 30}}, {}});
    FitOptions o;
    o.params = {FitParameter::parse("knob.K=0:400"), FitParameter::parse("output_scale=0.5:2")};
    o.seeds = {1};
    o.duration_s = 300;
    o.max_evaluations = 3;
    ScenarioFitter fitter("unified-vs-lmetric", t, o);
    const FitResult r = fitter.run(std::atomic<bool>{false});
    QCOMPARE(r.sensitivity.size(), std::size_t{2});
    QCOMPARE(r.sensitivity[0].param, std::string("knob.K"));
    QVERIFY(r.sensitivity[0].no_effect);
    QVERIFY2(!r.sensitivity[1].no_effect, qPrintable(QString::number(r.sensitivity[1].largest)));
  }

  void fitterRefusesWhatCannotRun() {
    CalibrationTarget t;
    t.file = "t.json";
    t.rows.push_back(TargetRow{"e2", "kv-aware", {}, {}, {0.5, 0.5}});
    FitOptions o;
    o.params = {FitParameter::parse("sessions=10:60")};
    o.seeds = {1};
    // e2-cold-d has 3 decode workers; the target gives 2 shares.
    QVERIFY(errorOf([&] { ScenarioFitter("e2-cold-d", t, o); }).find("the scenario has 3 decode workers") !=
            std::string::npos);
    o.params.push_back(FitParameter::parse("sessions=20:30"));
    QVERIFY(errorOf([&] { ScenarioFitter("e2-cold-d", t, o); }).find("given twice") != std::string::npos);
  }

  // check: n, the log-scale interval around the mean, and a pair's paired difference.
  void checkPredictsWithIntervals() {
    CalibrationTarget t;
    t.file = "t";
    t.rows.push_back(TargetRow{"unified", "unified", {}, {{"ttft_p90_s", 8}}, {}});
    t.rows.push_back(TargetRow{"lmetric", "lmetric", {}, {{"ttft_p90_s", 9}}, {}});
    const CandidateRuns runs({1, 2, 3}, 300, 0);
    const Scenario s = Scenario::load("unified-vs-lmetric");
    const CheckResult r = CalibrationCheck::run(s, t, {{"unified", "lmetric"}}, runs, std::atomic<bool>{false});
    QCOMPARE(r.seeds, std::size_t{3});
    QCOMPARE(r.metrics.size(), std::size_t{2});
    const auto& m = r.metrics[0];
    QCOMPARE(m.predicted.n, std::size_t{3});
    QVERIFY(m.predicted.scale == MeanInterval::Scale::Log);
    QVERIFY(m.predicted.lower <= m.predicted.mean && m.predicted.mean <= m.predicted.upper);
    QCOMPARE(r.pairs.size(), std::size_t{1});
    QVERIFY(std::abs(r.pairs[0].measured - (8.0 / 9.0 - 1)) < 1e-12);
    const std::string table = CalibrationCheck::table(r, s.name, t);
    QVERIFY2(table.find("n = 3 seeds") != std::string::npos, table.c_str());
    QVERIFY2(table.find("unified vs lmetric") != std::string::npos, table.c_str());
    QVERIFY(errorOf([&] {
              CalibrationCheck::run(s, t, {{"unified", "linear"}}, runs, std::atomic<bool>{false});
            }).find("no row 'linear'") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestCalibrateFit)
#include "test_calibrate_fit.moc"
