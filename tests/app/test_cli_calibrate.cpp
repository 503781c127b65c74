// `kvscope-cli calibrate fit` and `calibrate check` end to end with the real binary: a fit writes a
// scenario that `simulate` loads, with its "calibration" record, and prints target vs fitted, the
// parameters and their sensitivity; a parameter with no effect is warned about; bad input (unknown
// metric, broken JSON, unknown parameter, empty range) fails with exit 1 before any run and writes
// nothing; check states n and prints predicted vs measured with the interval and a pair's difference.
// Short runs (300 simulated s, 2 seeds, a few evaluations).
#include <QtTest>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <csignal>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

namespace {

bool writeFile(const QString& path, const QByteArray& content) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return f.write(content) == content.size();
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The calibrated scenario starts with comment lines (the loader allows comments; QJsonDocument not).
QJsonObject readScenario(const QString& path) {
  QByteArray text = readAll(path);
  while (text.startsWith("//")) text = text.mid(text.indexOf('\n') + 1);
  return QJsonDocument::fromJson(text).object();
}

const QByteArray kFitTarget =
    "// two rows, as the lab reports them\n"
    "{\"source\": \"test\", \"policies\": {\"linear\": {\"e2e_p90_s\": 40, \"ttft_p90_s\": 10},\n"
    "                                     \"lmetric\": {\"e2e_p90_s\": 30, \"ttft_p90_s\": 6}}}\n";
const QByteArray kCheckTarget =
    "{\"source\": \"held out\", \"policies\": {\"unified\": {\"e2e_p90_s\": 28, \"ttft_p90_s\": 5}}}\n";

}  // namespace

class TestCliCalibrate : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

  QString path(const QString& name) const { return tmp_.filePath(name); }
  QStringList fitArgs(const QString& out) const {
    return {"calibrate",
            "fit",
            "--scenario",
            "unified-vs-lmetric",
            "--target",
            path("fit.json"),
            "--fit",
            "output_scale=0.5:2",
            "--seeds",
            "2",
            "--duration",
            "300",
            "--evaluations",
            "3",
            "-j",
            "2",
            "-o",
            out};
  }

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(KVSCOPE_CLI).isExecutable(), qPrintable("kvscope-cli is not built at " + KVSCOPE_CLI));
    QVERIFY(tmp_.isValid());
    QVERIFY(writeFile(path("fit.json"), kFitTarget));
    QVERIFY(writeFile(path("unified.json"), kCheckTarget));
  }

  void fitWritesALoadableScenario() {
    const QString out = path("fitted.json");
    RUN_EXPECT(r, 0, fitArgs(out));
    const QString text = QString::fromUtf8(r.out);
    for (const char* s :
         {"fitted parameters:", "output_scale", "target vs fitted (fitted = mean over 2 seeds",
          "linear       e2e_p90_s", "lmetric      ttft_p90_s", "sensitivity", "after 3 evaluations", "wrote"})
      QVERIFY2(text.contains(s), qPrintable(QString(s) + " missing in:\n" + text));
    QVERIFY2(r.err.contains("ETA"), r.err.constData());  // not a terminal: plain progress lines
    QVERIFY(
        readAll(out).startsWith("// Calibrated by `kvscope-cli calibrate fit` from unified-vs-lmetric to: test.\n"));
    const QJsonObject j = readScenario(out);
    QCOMPARE(j["name"].toString(), QString("fitted"));
    QCOMPARE(j["duration_s"].toDouble(), 300.0);
    const QJsonObject cal = j["calibration"].toObject();
    QVERIFY(cal["parameters"].toObject()["output_scale"].toObject().contains("value"));
    QCOMPARE(cal["evaluations"].toInt(), 3);
    QCOMPARE(cal["errors"].toArray().size(), 4);
    QCOMPARE(cal["target"].toObject()["policies"].toObject().keys(), (QStringList{"linear", "lmetric"}));
    // A scenario like any other.
    RUN_EXPECT(sim, 0, QStringList{"simulate", "--scenario", out, "--duration", "60", "--quiet"});
    QVERIFY(sim.out.contains("fitted"));
    QCOMPARE(QDir(tmp_.path()).entryList({"*.partial"}, QDir::Files | QDir::Hidden).size(), 0);
  }

  void parameterWithoutEffectIsWarned() {
    QStringList args = fitArgs(path("k.json"));
    args.replace(args.indexOf("output_scale=0.5:2"), "knob.K=0:400");
    args.replace(args.indexOf("3"), "1");
    RUN_EXPECT(r, 0, args);
    QVERIFY2(r.err.contains("warning: knob.K has no effect on any target metric"), r.err.constData());
  }

  void badInputWritesNothing_data() {
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<QString>("fit");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown metric") << QByteArray("{\"policies\": {\"linear\": {\"e2e_p95_s\": 3}}}")
                                    << "output_scale=0.5:2"
                                    << "unknown metric";
    QTest::newRow("broken JSON") << QByteArray("{\n\"policies\": {\n\"linear\": {\"e2e_p90_s\": 3,,}}}")
                                 << "output_scale=0.5:2"
                                 << "bad-target.json:3:";
    QTest::newRow("unknown parameter") << kFitTarget << "speed=1:2"
                                       << "unknown parameter 'speed'";
    QTest::newRow("empty range") << kFitTarget << "output_scale=1.5:1.5"
                                 << "empty range";
    QTest::newRow("out of range") << kFitTarget << "sessions=0:10"
                                  << "must stay in [1, 100000]";
  }
  void badInputWritesNothing() {
    QFETCH(QByteArray, target);
    QFETCH(QString, fit);
    QFETCH(QString, expected);
    QVERIFY(writeFile(path("bad-target.json"), target));
    const QString out = path("never.json");
    RUN_EXPECT(r, 1,
               QStringList{"calibrate", "fit", "--scenario", "unified-vs-lmetric", "--target", path("bad-target.json"),
                           "--fit", fit, "--seeds", "1", "--duration", "60", "-o", out});
    QVERIFY2(r.err.contains(expected.toUtf8()), r.err.constData());
    QVERIFY(!r.err.contains("ETA"));  // nothing ran
    QVERIFY(!QFileInfo::exists(out));
    QCOMPARE(QDir(tmp_.path()).entryList({"*.partial"}, QDir::Files | QDir::Hidden).size(), 0);
  }

  // Ctrl+C during the search: the best point so far is written, and the output says it stopped early.
  void interruptWritesTheBestPointSoFar() {
    const QString out = path("interrupted.json");
    QStringList args = fitArgs(out);
    args.replace(args.indexOf("3"), "500");
    // A search that takes seconds, not one that converges before the signal: a simulated hour
    // per run and three parameters (one parameter on 300 s converged in 26 evaluations, 0.3 s).
    args.replace(args.indexOf("300"), "3600");
    args << "--fit"
         << "context_scale=0.5:3"
         << "--fit"
         << "sessions=16:128";
    QProcess p;
    p.setProgram(KVSCOPE_CLI);
    p.setArguments(args);
    p.start();
    QVERIFY(p.waitForStarted());
    QByteArray err;
    QElapsedTimer clock;
    clock.start();
    // Plain progress lines: wait until an evaluation has finished (a best objective is known).
    const QRegularExpression evaluated("best objective [0-9]");
    while (!QString::fromUtf8(err).contains(evaluated) && clock.elapsed() < 60000) {
      p.waitForReadyRead(200);
      err += p.readAllStandardError();
    }
    QVERIFY2(clock.elapsed() < 60000, err.constData());
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(60000));
    err += p.readAllStandardError();
    const QByteArray stdout_text = p.readAllStandardOutput();
    QCOMPARE(p.exitCode(), 130);
    QVERIFY2(err.contains("interrupted: stopping the search"), err.constData());
    QVERIFY2(stdout_text.contains("stopped early (interrupted)"), stdout_text.constData());
    const QJsonObject cal = readScenario(out)["calibration"].toObject();
    QVERIFY(cal["stopped_early"].toBool());
    QVERIFY(cal["evaluations"].toInt() >= 1 && cal["evaluations"].toInt() < 500);
  }

  // The target may be `report --format json` of a real recording: checked against the scenario and
  // seed that recorded it, the prediction is the recording's own numbers (error 0), every metric.
  void aRecordedRunsReportIsATarget() {
    const QString rec = path("run.kvrec");
    RUN_EXPECT(sim, 0,
               QStringList{"simulate", "--scenario", "e2-cold-d", "--seed", "1", "--duration", "300", "--record", rec,
                           "--quiet"});
    RUN_EXPECT(report, 0, QStringList{"report", rec, "--format", "json"});
    QVERIFY(writeFile(path("report.json"), report.out));
    RUN_EXPECT(r, 0,
               QStringList{"calibrate", "check", "--scenario", "e2-cold-d", "--target", path("report.json"), "--seeds",
                           "1", "--duration", "300"});
    const QString text = QString::fromUtf8(r.out);
    QVERIFY2(text.contains("n = 1 seeds (1)"), qPrintable(text));
    int rows = 0;
    const QRegularExpression metric_row(R"(^kv-aware\s+(e2e_|ttft_|token_|decode_share))");
    for (const QString& line : text.split('\n')) {
      if (!metric_row.match(line).hasMatch()) continue;
      ++rows;
      QVERIFY2(line.trimmed().endsWith("+0.0%") || line.trimmed().endsWith("+0.0 pts"), qPrintable(line));
    }
    QVERIFY2(rows >= 4, qPrintable(text));
  }

  void calibrateNeedsASubcommand() {
    RUN_EXPECT(r, 2, QStringList{"calibrate"});
    Q_UNUSED(r);
  }

  void checkPrintsNAndPredictedVsMeasured() {
    const QString scenario = "lab-004";  // the bundled calibrated scenario: no other test's output needed
    RUN_EXPECT(r, 0,
               QStringList{"calibrate", "check", "--scenario", scenario, "--target", path("unified.json"), "--target",
                           path("fit.json"), "--seeds", "2", "--duration", "300", "--pair", "unified:lmetric"});
    const QString text = QString::fromUtf8(r.out);
    for (const char* s : {"n = 2 seeds (1, 2)", "measured", "predicted", "95% CI (log scale)", "unified      e2e_p90_s",
                          "unified vs lmetric", "Student t"})
      QVERIFY2(text.contains(s), qPrintable(QString(s) + " missing in:\n" + text));
    // An unknown pair label is bad input.
    RUN_EXPECT(bad, 1,
               QStringList{"calibrate", "check", "--scenario", scenario, "--target", path("unified.json"), "--seeds",
                           "1", "--pair", "unified:nosuch"});
    QVERIFY(bad.err.contains("no row 'nosuch'"));
  }
};

QTEST_GUILESS_MAIN(TestCliCalibrate)
#include "test_cli_calibrate.moc"
