// A sweep's definition: the --grid/--seeds/--baseline syntax, sweep files (with the file, line and
// field in every error), validation before any run (unknown knob or policy, empty grid, value out of
// range, bad baseline), the grid's points and their file names, and the per-run summary files
// (RunSummaryJson round trip, atomic writes).
#include <QtTest>

#include <QFile>
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/AtomicFile.h"
#include "core/io/ResourceDir.h"
#include "core/model/Error.h"
#include "core/run/SimulationRun.h"
#include "core/sweep/RunSummaryJson.h"
#include "core/sweep/SweepFile.h"
#include "core/sweep/SweepSpec.h"

using namespace kvscope;

namespace {

SweepSpec gridSpec() {
  SweepSpec s;
  s.scenario = "e3-load-floor";
  s.axes = {SweepSpec::parseGrid("K=0,50,200"), SweepSpec::parseGrid("policy=kv-aware,exclusive-overlap")};
  s.seeds = {1, 2, 3};
  return s;
}

// The message of the InputError `fn` throws ("" when it throws none).
template <typename F>
QString errorOf(F fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestSweepSpec : public QObject {
  Q_OBJECT
 private slots:
  void flagSyntax() {
    const SweepAxis k = SweepSpec::parseGrid("K=0, 50,200");
    QCOMPARE(k.name, std::string("K"));
    QCOMPARE(k.values, (std::vector<std::string>{"0", "50", "200"}));
    QCOMPARE(SweepSpec::parseSeeds("4"), (std::vector<std::uint64_t>{1, 2, 3, 4}));
    QCOMPARE(SweepSpec::parseSeeds("3,7,11"), (std::vector<std::uint64_t>{3, 7, 11}));
    QCOMPARE(SweepSpec::parseSeeds("7,"), (std::vector<std::uint64_t>{7}));
    const auto b = SweepSpec::parseBaseline("policy=kv-aware,K=0");
    QCOMPARE(b.size(), std::size_t(2));
    QCOMPARE(b[1].first, std::string("K"));
    QVERIFY(errorOf([] { SweepSpec::parseGrid("K="); }).contains("empty grid"));
    QVERIFY(errorOf([] { SweepSpec::parseGrid("K"); }).contains("NAME=V1,V2"));
    QVERIFY(errorOf([] { SweepSpec::parseSeeds("0"); }).contains("--seeds"));
    QVERIFY(errorOf([] { SweepSpec::parseSeeds("1,x"); }).contains("'x'"));
    QVERIFY(errorOf([] { SweepSpec::parseBaseline("K"); }).contains("--baseline"));
  }

  void pointsAreTheProductWithTheLastAxisFastest() {
    const SweepSpec s = gridSpec();
    const auto points = s.points();
    QCOMPARE(points.size(), std::size_t(6));
    QCOMPARE(points[0].label(), std::string("K=0,policy=kv-aware"));
    QCOMPARE(points[1].label(), std::string("K=0,policy=exclusive-overlap"));
    QCOMPARE(points[5].label(), std::string("K=200,policy=exclusive-overlap"));
    QCOMPARE(points[5].fileStem(), std::string("K=200_policy=exclusive-overlap"));
    QCOMPARE(points[5].knobs.at("K"), 200.0);
    QCOMPARE(points[5].policy, std::string("exclusive-overlap"));
    // The same seeds for every point; simulate's options for (point, seed).
    const SimulationOptions o = s.optionsFor(points[3], 2);
    QCOMPARE(*o.seed, std::uint64_t(2));
    QCOMPARE(o.policy, std::string("exclusive-overlap"));
    QCOMPARE(o.knobs.at("K"), 50.0);
  }

  void baseline() {
    SweepSpec s = gridSpec();
    QCOMPARE(s.baselineIndex(), std::size_t(0));  // the first point
    s.baseline = SweepSpec::parseBaseline("policy=exclusive-overlap,K=50");
    QCOMPARE(s.baselineIndex(), std::size_t(3));
    s.baseline = SweepSpec::parseBaseline("K=200");  // policy: its first value
    QCOMPARE(s.baselineIndex(), std::size_t(4));
    s.baseline = SweepSpec::parseBaseline("K=200.0");  // knob values are numbers
    QCOMPARE(s.baselineIndex(), std::size_t(4));
    QCOMPARE(errorOf([&] { s.validate(); }), QString());
  }

  void validationCatchesBadInput_data() {
    QTest::addColumn<QString>("grid1");
    QTest::addColumn<QString>("baseline");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown knob") << "Kx=1,2"
                                  << ""
                                  << "--grid Kx: unknown knob 'Kx'";
    QTest::newRow("out of range") << "K=0,-5"
                                  << ""
                                  << "out of range";
    QTest::newRow("rho out of range") << "rho=0.9,2"
                                      << ""
                                      << "out of range [0.1, 1]";
    QTest::newRow("not a number") << "K=0,lots"
                                  << ""
                                  << "expected a number, got 'lots'";
    QTest::newRow("whole number") << "session_soft_cap=1.5,2"
                                  << ""
                                  << "whole number";
    QTest::newRow("unknown policy") << "policy=kv-aware,fastest"
                                    << ""
                                    << "unknown policy 'fastest'";
    QTest::newRow("repeated value") << "K=0,0"
                                    << ""
                                    << "given twice";
    QTest::newRow("repeated number") << "K=50,5e1"
                                     << ""
                                     << "value '5e1' is given twice";
    QTest::newRow("seed axis") << "seed=1,2"
                               << ""
                               << "--seeds";
    QTest::newRow("baseline not an axis") << "K=0,200"
                                          << "rho=0.9"
                                          << "not a grid axis";
    QTest::newRow("baseline not a value") << "K=0,200"
                                          << "K=100"
                                          << "'100' is not among";
  }
  void validationCatchesBadInput() {
    QFETCH(QString, grid1);
    QFETCH(QString, baseline);
    QFETCH(QString, expected);
    SweepSpec s;
    s.seeds = {1, 2};
    s.axes = {SweepSpec::parseGrid(grid1.toStdString())};
    if (!baseline.isEmpty()) s.baseline = SweepSpec::parseBaseline(baseline.toStdString());
    const QString error = errorOf([&] { s.validate(); });
    QVERIFY2(error.contains(expected), qPrintable(error));
  }

  void validationOfTheWhole() {
    SweepSpec s = gridSpec();
    QCOMPARE(errorOf([&] { s.validate(); }), QString());
    SweepSpec empty = s;
    empty.axes.clear();
    QVERIFY(errorOf([&] { empty.validate(); }).contains("empty grid"));
    SweepSpec twice = s;
    twice.axes.push_back(SweepSpec::parseGrid("K=1"));
    QVERIFY(errorOf([&] { twice.validate(); }).contains("given twice"));
    SweepSpec seeds = s;
    seeds.seeds = {1, 1};
    QVERIFY(errorOf([&] { seeds.validate(); }).contains("listed twice"));
    SweepSpec fixed = s;
    fixed.fixed_knobs["K"] = 1;
    QVERIFY(errorOf([&] { fixed.validate(); }).contains("also a grid axis"));
    SweepSpec scenario = s;
    scenario.scenario = "no-such-scenario";
    QVERIFY(errorOf([&] { scenario.validate(); }).contains("unknown scenario"));
    SweepSpec level = s;
    level.level = 1.5;
    QVERIFY(errorOf([&] { level.validate(); }).contains("--level"));
  }

  void sweepFile() {
    const std::string text =
        "// K against policy\n"
        "{\n"
        "  \"scenario\": \"e3-load-floor\",\n"
        "  \"grid\": {\n"
        "    \"policy\": [\"kv-aware\", \"exclusive-overlap\"],\n"
        "    \"K\": [0, 200.5]\n"
        "  },\n"
        "  \"seeds\": [3, 7, 11],\n"
        "  \"baseline\": { \"K\": 200.5 },\n"
        "  \"knobs\": { \"rho\": 0.9 },\n"
        "  \"duration_s\": 120, \"jobs\": 2, \"level\": 0.1\n"
        "}\n";
    const SweepSpec s = SweepFile::parse(text, "k.sweep.json");
    QCOMPARE(s.axes.size(), std::size_t(2));
    QCOMPARE(s.axes[0].name, std::string("policy"));  // the file's order, not alphabetical
    QCOMPARE(s.axes[1].values, (std::vector<std::string>{"0", "200.5"}));
    QCOMPARE(s.seeds, (std::vector<std::uint64_t>{3, 7, 11}));
    QCOMPARE(s.fixed_knobs.at("rho"), 0.9);
    QCOMPARE(*s.duration_s, 120.0);
    QCOMPARE(s.jobs, 2u);
    QCOMPARE(s.level, 0.1);
    QCOMPARE(errorOf([&] { s.validate(); }), QString());
    QCOMPARE(s.points()[s.baselineIndex()].label(), std::string("policy=kv-aware,K=200.5"));
  }

  // Several recorded runs are replicates: seed i replays run i, named relative to the file, and the
  // file written back lists them.
  void recordedRunsInASweepFile() {
    const SweepSpec s = SweepFile::parse(
        R"({ "grid": { "K": [0, 200] }, "seeds": [4, 9], "trace": ["runs/a.kvrec", "/data/b.kvrec"] })",
        "/lab/k.sweep.json");
    QCOMPARE(s.traces, (std::vector<std::string>{"/lab/runs/a.kvrec", "/data/b.kvrec"}));
    QCOMPARE(s.optionsFor(s.points()[1], 9).trace, std::string("/data/b.kvrec"));
    QCOMPARE(s.optionsFor(s.points()[0], 4).trace, std::string("/lab/runs/a.kvrec"));
    const std::string text = SweepFile::text(s);
    QVERIFY2(text.find("\"/lab/runs/a.kvrec\",") != std::string::npos, text.c_str());
    QCOMPARE(SweepFile::parse(text, "/elsewhere/k.json").traces, s.traces);
  }

  void bundledExampleValidates() {
    const std::string path = resourcePath("sweeps/e3-k-vs-policy.json");
    const SweepSpec s = SweepFile::load(path);
    QCOMPARE(errorOf([&] { s.validate(); }), QString());
    QCOMPARE(s.points().size(), std::size_t(8));
    QCOMPARE(s.seeds.size(), std::size_t(6));  // the fewest that can reach a verdict at 0.05
    QCOMPARE(s.points()[s.baselineIndex()].label(), std::string("policy=kv-aware,K=0"));
  }

  void scenarioBesideTheSweepFile() {
    QTemporaryDir dir;
    QVERIFY(
        QFile::copy(QString::fromStdString(resourcePath("scenarios/e3-load-floor.json")), dir.filePath("mine.json")));
    std::ofstream(dir.filePath("s.json").toStdString())
        << "{ \"scenario\": \"mine.json\", \"grid\": { \"K\": [0] }, \"seeds\": 1 }";
    const SweepSpec s = SweepFile::load(dir.filePath("s.json").toStdString());
    QCOMPARE(QString::fromStdString(s.scenario), dir.filePath("mine.json"));
    QCOMPARE(errorOf([&] { s.validate(); }), QString());
  }

  void sweepFileErrorsNameFileLineAndField_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown knob on line 4")
        << "{\n  \"grid\": {\n    \"K\": [0, 200],\n    \"Kz\": [1]\n  },\n  \"seeds\": 3\n}\n"
        << "s.json:4: field 'grid.Kz': unknown knob 'Kz'";
    QTest::newRow("out of range on line 3") << "{\n  \"seeds\": 3,\n  \"grid\": { \"rho\": [0.5, 7] }\n}\n"
                                            << "s.json:3: field 'grid.rho':";
    QTest::newRow("empty axis") << "{\n  \"seeds\": 3,\n  \"grid\": {\n    \"K\": []\n  }\n}\n"
                                << "s.json:4: field 'grid.K': empty grid";
    QTest::newRow("empty grid") << "{\n  \"seeds\": 3,\n  \"grid\": {}\n}\n"
                                << "s.json:3: field 'grid': empty grid";
    QTest::newRow("unknown field") << "{\n  \"seeds\": 3,\n  \"grids\": {}\n}\n"
                                   << "s.json:3: field 'grids': unknown field";
    QTest::newRow("seeds type") << "{\n  \"grid\": { \"K\": [0] },\n  \"seeds\": \"many\"\n}\n"
                                << "s.json:3: field 'seeds': expected a count or a list";
    QTest::newRow("recorded runs without as many seeds")
        << "{\n  \"grid\": { \"K\": [0] },\n  \"seeds\": 3,\n  \"trace\": [\"a.kvrec\", \"b.kvrec\"]\n}\n"
        << "s.json:3: field 'seeds': 2 recorded runs are as many replicates";
    QTest::newRow("empty trace list") << "{\n  \"grid\": { \"K\": [0] },\n  \"trace\": []\n}\n"
                                      << "s.json:3: field 'trace': expected a trace or recording file, or a list";
    QTest::newRow("syntax") << "{\n  \"grid\": { \"K\": [0, ] }\n}\n"
                            << "s.json:2: invalid JSON";
  }
  void sweepFileErrorsNameFileLineAndField() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const QString error = errorOf([&] { SweepFile::parse(text.toStdString(), "s.json").validate(); });
    QVERIFY2(error.startsWith(expected), qPrintable(error));
  }

  void runSummaryJsonRoundTrip() {
    SimulationOptions o;
    o.duration_s = 120;
    o.knobs["K"] = 200;
    const RunSummary s = runSimulation(Scenario::load("e3-load-floor"), o);
    QVERIFY(s.total > 0);
    QVERIFY(!s.workers.empty());
    const nlohmann::json j = s.toJson();
    QCOMPARE(QString::fromStdString(RunSummaryJson::fromJson(j).toJson().dump()), QString::fromStdString(j.dump()));
    nlohmann::json broken = j;
    broken.erase("e2e_s");
    QVERIFY_THROWS_EXCEPTION(std::exception, RunSummaryJson::fromJson(broken));
  }

  void atomicFile() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("summary.json").toStdString();
    std::string error;
    QVERIFY(AtomicFile::write(path, "{\"a\": 1}\n", &error));
    std::ifstream in(path);
    std::string content((std::istreambuf_iterator<char>(in)), {});
    QCOMPARE(content, std::string("{\"a\": 1}\n"));
    QVERIFY(!std::filesystem::exists(AtomicFile::partialPath(path)));
    QCOMPARE(AtomicFile::partialPath("/d/x.json"), std::string("/d/.x.json.partial"));
    // A directory that does not exist: an error naming the file, nothing left behind.
    QVERIFY(!AtomicFile::write(dir.filePath("nope/x.json").toStdString(), "x", &error));
    QVERIFY2(QString::fromStdString(error).contains("nope/x.json"), error.c_str());
  }
};

QTEST_GUILESS_MAIN(TestSweepSpec)
#include "test_sweep_spec.moc"
