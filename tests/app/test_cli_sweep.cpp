// `kvscope-cli sweep` and `compare` end to end with the real binary: a 2x3 sweep on e3-load-floor
// over 3 seeds writes every run and the three summaries, the tables hold the runs' own numbers, a
// run's summary is what `simulate` prints for the same scenario, knobs and seed, a rerun with
// --resume does no work and touches no run file; unified vs lmetric over 5 seeds gives the two-policy
// table with verdicts that say "needs >= 6 seeds"; `compare` on the recordings gives the same numbers; bad input fails
// before any run, creating nothing; Ctrl+C stops cleanly and --resume finishes.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <cmath>
#include <csignal>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QJsonObject readObject(const QString& path) { return QJsonDocument::fromJson(readAll(path)).object(); }

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

const QStringList kPoints{"K=0,policy=kv-aware",   "K=0,policy=exclusive-overlap",
                          "K=200,policy=kv-aware", "K=200,policy=exclusive-overlap",
                          "K=400,policy=kv-aware", "K=400,policy=exclusive-overlap"};

QString stemOf(const QString& label) { return QString(label).replace(',', '_'); }

// Every file of a sweep directory with its size and modification time, to see that nothing changed.
QMap<QString, QPair<qint64, QDateTime>> runFiles(const QString& dir) {
  QMap<QString, QPair<qint64, QDateTime>> out;
  for (const QFileInfo& fi : QDir(dir).entryInfoList(QDir::Files | QDir::Hidden))
    if (!fi.fileName().startsWith("summary.")) out[fi.fileName()] = {fi.size(), fi.lastModified()};
  return out;
}

}  // namespace

class TestCliSweep : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(KVSCOPE_CLI).isExecutable(), qPrintable("kvscope-cli is not built at " + KVSCOPE_CLI));
    QVERIFY(tmp_.isValid());
  }

  // The lab's dispatch ablation (v2/exp_c_dispatch_ablation) as a sweep: `dispatch` is an axis,
  // and every run of a point carries its mode; a bad mode names the axis.
  void dispatchIsAGridAxis() {
    const QString out = tmp_.filePath("dispatch");
    RUN_EXPECT(r, 0,
               QStringList({"sweep",
                            "--scenario",
                            "e3-load-floor",
                            "--grid",
                            "dispatch=closed,burst",
                            "--seeds",
                            "2",
                            "--duration",
                            "600",
                            "--max-inflight-sessions",
                            "40",
                            "--request-timeout",
                            "600",
                            "--wall-deadline",
                            "500",
                            "--jobs",
                            "2",
                            "--quiet",
                            "--out",
                            out}));
    QVERIFY2(r.out.contains("4 runs: 4 ran now"), r.out.constData());
    const QJsonObject burst = readObject(out + "/dispatch=burst-seed1.json");
    QCOMPARE(burst["sweep_run"].toObject()["dispatch"].toString(), QString("burst"));
    QCOMPARE(burst["sweep_run"].toObject()["max_inflight_sessions"].toInt(), 40);
    QCOMPARE(burst["sweep_run"].toObject()["knobs"].toObject()["request_timeout_s"].toDouble(), 600.0);
    QVERIFY(burst["summary"].toObject()["sim_seconds"].toDouble() <= 500.0);
    RUN_EXPECT(bad, 1,
               QStringList({"sweep", "--grid", "dispatch=closed,nope", "--seeds", "1", "--out", tmp_.filePath("bad")}));
    QVERIFY2(bad.err.contains("--grid dispatch: unknown dispatch 'nope'"), bad.err.constData());
  }

  void gridSweepWritesRunsAndTablesAndResumes() {
    const QString out = tmp_.filePath("grid");
    const QStringList args{"sweep",
                           "--scenario",
                           "e3-load-floor",
                           "--grid",
                           "K=0,200,400",
                           "--grid",
                           "policy=kv-aware,exclusive-overlap",
                           "--seeds",
                           "3",
                           "--duration",
                           "900",
                           "--jobs",
                           "2",
                           "--out",
                           out};
    RUN_EXPECT(r, 0, args);
    QVERIFY2(r.out.contains("18 runs: 18 ran now, 0 reused, 0 failed"), r.out.constData());
    // Not a terminal: plain progress lines with an ETA.
    QVERIFY2(r.err.contains("ETA") && !r.err.contains('\r'), r.err.left(400).constData());
    for (const char* f : {"summary.md", "summary.csv", "summary.json"}) QVERIFY(QFileInfo(out + "/" + f).size() > 100);
    QCOMPARE(QDir(out).entryList({"*.kvrec"}, QDir::Files).size(), 18);
    QCOMPARE(QDir(out).entryList({"*-seed*.json"}, QDir::Files).size(), 18);
    QCOMPARE(QDir(out).entryList({"*.partial"}, QDir::Files | QDir::Hidden).size(), 0);

    // The tables hold the runs' own numbers: values in seed order, their mean, per-D shares.
    const QJsonObject summary = readObject(out + "/summary.json");
    const QJsonArray points = summary["points"].toArray();
    QCOMPARE(points.size(), 6);
    QCOMPARE(summary["baseline"].toString(), kPoints[0]);
    for (int p = 0; p < 6; ++p) {
      const QJsonObject point = points[p].toObject();
      QCOMPARE(point["label"].toString(), kPoints[p]);
      const QJsonObject e2e = point["metrics"].toObject()["e2e_mean_s"].toObject();
      const QJsonObject ttft = point["metrics"].toObject()["ttft_p90_s"].toObject();
      const QJsonObject d2 = point["metrics"].toObject()["share_D2"].toObject();
      double sum = 0;
      for (int seed = 1; seed <= 3; ++seed) {
        const QJsonObject run =
            readObject(out + "/" + stemOf(kPoints[p]) + "-seed" + QString::number(seed) + ".json")["summary"]
                .toObject();
        QCOMPARE(run["seed"].toInt(), seed);
        QCOMPARE(e2e["values"].toArray()[seed - 1].toDouble(), run["e2e_s"].toObject()["mean"].toDouble());
        QCOMPARE(ttft["values"].toArray()[seed - 1].toDouble(), run["ttft_s"].toObject()["p90"].toDouble());
        QCOMPARE(d2["values"].toArray()[seed - 1].toDouble(),
                 run["workers"].toArray()[2].toObject()["share"].toDouble());
        sum += run["e2e_s"].toObject()["mean"].toDouble();
      }
      QVERIFY(near(e2e["mean"].toDouble(), sum / 3));
      QVERIFY(e2e["ci95_low"].toDouble() <= e2e["mean"].toDouble() &&
              e2e["mean"].toDouble() <= e2e["ci95_high"].toDouble());
      QVERIFY(e2e["ci95_low"].toDouble() > 0);  // a latency's interval stays above zero
      QCOMPARE(e2e["ci95_scale"].toString(), QString("log scale"));
      if (p == 0) {
        QVERIFY(e2e["test"].isNull());  // the baseline
      } else {
        const QJsonObject test = e2e["test"].toObject();
        QCOMPARE(test["pairs"].toInt(), 3);
        // 3 seeds: the exact test can never go below 2/8 = 0.25, so no verdict but "needs >= 6 seeds".
        QCOMPARE(test["name"].toString(), QString("sign-flip (exact)"));
        QVERIFY(test["p_value"].toDouble() >= 0.25);
        QCOMPARE(test["smallest_p"].toDouble(), 0.25);
        QCOMPARE(test["verdict"].toString(), QString("needs more seeds"));
        QCOMPARE(test["verdict_text"].toString(), QString("needs >= 6 seeds"));
      }
    }
    const QString md = QString::fromUtf8(readAll(out + "/summary.md"));
    QVERIFY(md.contains("## Per-D bindings"));
    QVERIFY(md.contains("| " + kPoints[5] + " |"));
    QVERIFY(!md.contains(" vs "));  // K varies too: no two-policy table
    const QStringList csv = QString::fromUtf8(readAll(out + "/summary.csv")).split('\n', Qt::SkipEmptyParts);
    QVERIFY(csv[0].startsWith("point,K,policy,metric,"));
    QVERIFY(csv.size() > 6 * 10);

    // A run's summary is exactly what `simulate` prints for that scenario, knobs and seed (wall time aside),
    // and what `report` computes from its recording.
    RUN_EXPECT(sim, 0,
               QStringList{"simulate", "--scenario", "e3-load-floor", "--set", "K=200", "--policy", "exclusive-overlap",
                           "--seed", "2", "--duration", "900", "--quiet", "--format", "json"});
    QJsonObject a = QJsonDocument::fromJson(sim.out).object();
    QJsonObject b = readObject(out + "/K=200_policy=exclusive-overlap-seed2.json")["summary"].toObject();
    RUN_EXPECT(rep, 0, QStringList{"report", out + "/K=200_policy=exclusive-overlap-seed2.kvrec", "--format", "json"});
    QJsonObject c = QJsonDocument::fromJson(rep.out).object();
    for (QJsonObject* o : {&a, &b, &c}) o->remove("wall_seconds");
    QVERIFY(!a.isEmpty());
    QCOMPARE(b, a);
    c.remove("skipped_records"), a.remove("skipped_records");
    QCOMPARE(c, a);

    // --resume: every run is done, nothing runs and no run file is touched.
    const auto before = runFiles(out);
    const QByteArray md_before = readAll(out + "/summary.md");
    RUN_EXPECT(again, 0, args + QStringList{"--resume"});
    QVERIFY2(again.out.contains("18 runs: 0 ran now, 18 reused, 0 failed"), again.out.constData());
    QCOMPARE(runFiles(out), before);
    QCOMPARE(readAll(out + "/summary.md"), md_before);

    // A damaged summary is not taken for a finished run: --resume runs that one again.
    const QString victim = out + "/K=400_policy=kv-aware-seed3.json";
    QFile f(victim);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write("{\"sweep_run\": ");
    f.close();
    RUN_EXPECT(mended, 0, args + QStringList{"--resume"});
    QVERIFY2(mended.out.contains("18 runs: 1 ran now, 17 reused"), mended.out.constData());
    QCOMPARE(readAll(out + "/summary.md"), md_before);
  }

  // A `sweep --resume` while the same sweep still runs in the same --out is refused with the
  // running one's pid (they would race renames and write summaries missing runs); once it has
  // ended, the resume runs and finds everything done.
  void oneSweepPerDirectory() {
    const QString out = tmp_.filePath("locked");
    const QStringList args{"sweep",   "--scenario", "lab-w600-8c", "--grid", "policy=lmetric,linear,unified",
                           "--seeds", "4",          "--duration",  "3600",   "-j",
                           "1",       "--quiet",    "--out",       out};
    QProcess first;
    first.start(KVSCOPE_CLI, args);
    QVERIFY(first.waitForStarted(kTimeoutMs));
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(out + "/.kvscope.lock"), 20000);
    RUN_EXPECT(second, 1, args + QStringList{"--resume"});
    QVERIFY2(second.err.contains("in use by another sweep (pid " + QByteArray::number(first.processId()) + ")"),
             second.err.constData());
    QVERIFY(first.waitForFinished(kTimeoutMs));
    QCOMPARE(first.exitCode(), 0);
    RUN_EXPECT(after, 0, args + QStringList{"--resume"});
    QVERIFY2(after.out.contains("0 ran now, 12 reused"), after.out.constData());
  }

  void twoPoliciesOverFiveSeeds() {
    const QString out = tmp_.filePath("two");
    RUN_EXPECT(r, 0,
               QStringList{"sweep", "--scenario", "unified-vs-lmetric", "--grid", "policy=lmetric,unified", "--seeds",
                           "5", "--duration", "1800", "--out", out, "--quiet"});
    QVERIFY(r.err.isEmpty());
    const QString md = QString::fromUtf8(readAll(out + "/summary.md"));
    QVERIFY2(md.contains("## unified vs lmetric"), qPrintable(md.left(800)));
    for (const char* row :
         {"| E2E mean (s) |", "| E2E p50 (s) |", "| E2E p90 (s) |", "| TTFT p90 (s) |", "| errors (failed requests) |"})
      QVERIFY2(md.contains(row), row);
    const QJsonObject two = readObject(out + "/summary.json")["two_policy"].toObject();
    QCOMPARE(two["baseline"].toString(), QString("lmetric"));
    QCOMPARE(two["other"].toString(), QString("unified"));
    const QJsonArray rows = two["rows"].toArray();
    QCOMPARE(rows.size(), 5);
    for (const auto& v : rows) {
      const QJsonObject row = v.toObject();
      const QString verdict = row["verdict"].toString();
      if (row["metric"].toString() == "errors" && row["p_value"].toDouble() == 1.0) {
        QCOMPARE(verdict, QString("not significant"));  // no errors either way: no difference
        continue;
      }
      // 5 seeds: the smallest p they allow is 2/32 = 0.0625, never below 0.05.
      QCOMPARE(row["test"].toObject()["smallest_p"].toDouble(), 0.0625);
      QCOMPARE(verdict, QString("needs more seeds"));
      QVERIFY(row["p_value"].toDouble() >= 0.0625);
      const double change = (row["other_mean"].toDouble() - row["baseline_mean"].toDouble()) /
                            std::abs(row["baseline_mean"].toDouble()) * 100;
      QVERIFY(near(row["change_pct"].toDouble(), change));
    }

    // `compare` on the recordings: the same points, the same numbers, paired by seed.
    QStringList recs;
    for (const char* policy : {"lmetric", "unified"})
      for (int seed = 1; seed <= 5; ++seed)
        recs << out + "/policy=" + policy + "-seed" + QString::number(seed) + ".kvrec";
    RUN_EXPECT(cmp, 0, QStringList{"compare"} + recs + QStringList{"--format", "json"});
    const QJsonObject fromRecordings = QJsonDocument::fromJson(cmp.out).object();
    QVERIFY(fromRecordings["paired"].toBool());
    const QJsonArray rows2 = fromRecordings["two_policy"].toObject()["rows"].toArray();
    QCOMPARE(rows2.size(), 5);
    for (int i = 0; i < 5; ++i) {
      QCOMPARE(rows2[i].toObject()["other_mean"].toDouble(), rows[i].toObject()["other_mean"].toDouble());
      QCOMPARE(rows2[i].toObject()["p_value"].toDouble(), rows[i].toObject()["p_value"].toDouble());
      QCOMPARE(rows2[i].toObject()["verdict"].toString(), rows[i].toObject()["verdict"].toString());
    }
    RUN_EXPECT(cmpMd, 0, QStringList{"compare"} + recs);
    QVERIFY(cmpMd.out.contains("## unified vs lmetric"));
    QVERIFY(cmpMd.out.contains("| needs >= 6 seeds |"));
    QVERIFY(!cmpMd.out.contains("| significant |"));
    // Unpaired: a seed missing on one side.
    RUN_EXPECT(unpaired, 0, QStringList{"compare"} + recs.mid(0, 9));
    QVERIFY2(unpaired.out.contains("unpaired"), unpaired.out.left(600).constData());
  }

  void badInputFailsBeforeAnyRun_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown knob") << QStringList{"--grid", "Kx=0,200"} << "--grid Kx: unknown knob 'Kx'";
    QTest::newRow("empty grid") << QStringList{"--grid", "K="} << "--grid K: empty grid";
    QTest::newRow("no grid") << QStringList{} << "--grid: empty grid";
    QTest::newRow("out of range") << QStringList{"--grid", "K=0,20000"} << "out of range [0, 10000]";
    QTest::newRow("rho out of range") << QStringList{"--grid", "rho=0.95,1.5"}
                                      << "--grid rho: knob 'rho': 1.5 is out of range";
    QTest::newRow("unknown policy") << QStringList{"--grid", "policy=kv-aware,best"} << "unknown policy 'best'";
    QTest::newRow("bad baseline") << QStringList{"--grid", "K=0,200", "--baseline", "K=100"} << "'100' is not among";
    QTest::newRow("unknown scenario") << QStringList{"--scenario", "nope", "--grid", "K=0,200"}
                                      << "unknown scenario 'nope'";
    QTest::newRow("bad seeds") << QStringList{"--grid", "K=0,200", "--seeds", "a,b"} << "--seeds";
  }
  void badInputFailsBeforeAnyRun() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const QString out = tmp_.filePath("bad");
    RUN_EXPECT(r, 1, QStringList{"sweep"} + args + QStringList{"--out", out});
    QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
    QVERIFY(r.out.isEmpty());
    QVERIFY2(!QFileInfo::exists(out), "a sweep that failed validation created its output directory");
  }

  void sweepFileAndItsErrors() {
    const QString file = tmp_.filePath("k.sweep.json");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "// K on e3\n{\n  \"scenario\": \"e3-load-floor\",\n  \"grid\": { \"K\": [0, 200] },\n"
        "  \"seeds\": [4, 9],\n  \"duration_s\": 300\n}\n");
    f.close();
    const QString out = tmp_.filePath("fromfile");
    RUN_EXPECT(r, 0, QStringList{"sweep", file, "--out", out, "--quiet"});
    QVERIFY2(r.out.contains("2 grid points x 2 seeds = 4 runs: 4 ran now"), r.out.constData());
    QVERIFY(QFileInfo::exists(out + "/K=200-seed9.kvrec"));
    // Two seeds: the table says there are too few to claim anything.
    QVERIFY(readAll(out + "/summary.md").contains("| 2 | sign-flip (exact, 4 patterns) | 0.500 | 0.500 |"));
    QVERIFY(readAll(out + "/summary.md").contains("needs >= 6 seeds"));
    // The grid in the file and on the command line: a usage error.
    RUN_EXPECT(both, 2, QStringList{"sweep", file, "--grid", "K=1,2", "--out", out});

    const QString bad = tmp_.filePath("bad.sweep.json");
    QFile g(bad);
    QVERIFY(g.open(QIODevice::WriteOnly));
    g.write("{\n  \"grid\": {\n    \"K\": [0, 200],\n    \"rho\": [0.9, 3]\n  },\n  \"seeds\": 3\n}\n");
    g.close();
    const QString badOut = tmp_.filePath("badfile");
    RUN_EXPECT(e, 1, QStringList{"sweep", bad, "--out", badOut});
    QVERIFY2(e.err.contains((bad + ":4: field 'grid.rho': knob 'rho': 3 is out of range").toUtf8()), e.err.constData());
    QVERIFY(!QFileInfo::exists(badOut));
  }

  void interruptStopsCleanlyAndResumeFinishes() {
    const QString out = tmp_.filePath("interrupted");
    // 120 runs of 20 simulated minutes: several seconds of work, so the interrupt always lands
    // mid-sweep, yet the resume stays well inside the timeout on a loaded 2-core machine.
    const QStringList args{"sweep",      "--scenario", "e3-load-floor", "--grid", "K=0,100,200,300", "--seeds", "30",
                           "--duration", "1200",       "--jobs",        "2",      "--out",           out};
    QProcess p;
    p.start(KVSCOPE_CLI, args);
    QVERIFY(p.waitForStarted(kTimeoutMs));
    // Wait until some runs are done and others running, then Ctrl+C.
    QTRY_VERIFY_WITH_TIMEOUT(QDir(out).entryList({"*-seed*.json"}, QDir::Files).size() >= 2, 60000);
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(kTimeoutMs));
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 130);
    QVERIFY2(err.contains("interrupted") && err.contains("--resume"), err.constData());
    QCOMPARE(QDir(out).entryList({"*.partial"}, QDir::Files | QDir::Hidden).size(), 0);  // nothing half-written
    QVERIFY(!QFileInfo::exists(out + "/summary.md"));
    const int done = QDir(out).entryList({"*-seed*.json"}, QDir::Files).size();
    QVERIFY(done >= 2 && done < 120);
    QCOMPARE(QDir(out).entryList({"*.kvrec"}, QDir::Files).size(), done);  // a recording per finished run, no more
    RUN_EXPECT(resumed, 0, args + QStringList{"--resume", "--quiet"});
    QVERIFY2(resumed.out.contains(QString("120 runs: %1 ran now, %2 reused").arg(120 - done).arg(done).toUtf8()),
             resumed.out.constData());
    QVERIFY(QFileInfo::exists(out + "/summary.md"));
  }

  // --executor slurm where Slurm is not installed says so before anything is submitted; --status of
  // a directory no Slurm sweep wrote says what it needs; the flags are in --help. (A real Slurm:
  // tests/app/test_slurm_sweep.sh.)
  void slurmExecutorWithoutSlurm() {
    const QString out = tmp_.filePath("slurm-nowhere");
    QTemporaryDir empty;  // PATH: no sbatch, squeue or sacct in it
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("PATH", empty.path());
    p.setProcessEnvironment(env);
    p.start(KVSCOPE_CLI, {"sweep", "--grid", "K=0,200", "--seeds", "2", "--duration", "600", "--out", out, "--executor",
                          "slurm", "--partition", "cpu"});
    QVERIFY(p.waitForFinished(kTimeoutMs));
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains("sbatch not found: install slurm-client or use --executor local"), err.constData());
    QVERIFY(QFileInfo::exists(out + "/slurm/submit-1.sbatch"));  // kept to be read
    QVERIFY(!QFileInfo::exists(out + "/slurm/submit-1.runs"));
    QVERIFY(!QFileInfo::exists(out + "/slurm/jobs"));
    QVERIFY(QDir(out).entryList({"*-seed*"}, QDir::Files).isEmpty());  // nothing ran here

    RUN_EXPECT(status, 1, QStringList{"sweep", "--status", tmp_.path()});
    QVERIFY2(status.err.contains("no sweep.json here"), status.err.constData());
    RUN_EXPECT(local, 2, QStringList{"sweep", "--grid", "K=0", "--out", out, "--partition", "cpu"});
    RUN_EXPECT(help, 0, QStringList{"sweep", "--help"});
    for (const char* flag : {"--executor", "--partition", "--time", "--cpus-per-task", "--tasks", "--status"})
      QVERIFY2(help.out.contains(flag), flag);
    QVERIFY(!help.out.contains("--run-task"));  // the tasks' own flag is not for people
  }
};

QTEST_GUILESS_MAIN(TestCliSweep)
#include "test_cli_sweep.moc"
