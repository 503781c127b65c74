// kvscope-cli and recordings, end to end with the real binary: `simulate --record`, `report` (the same
// summary as the simulation), `export`, damaged or foreign files, and a SIGKILLed recorder.
#include <QtTest>

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

class TestCliRecordings : public QObject {
  Q_OBJECT
 private slots:
  void recordReportExport() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(sim, 0,
               QStringList{"simulate", "--scenario", "cascade", "--duration", "900", "--quiet", "--format", "json",
                           "--record", rec});
    RUN_EXPECT(rep, 0, QStringList{"report", rec, "--format", "json"});
    // The same summary, from the recording alone (wall time aside).
    QJsonObject a = QJsonDocument::fromJson(sim.out).object(), b = QJsonDocument::fromJson(rep.out).object();
    for (const char* k : {"wall_seconds", "skipped_records"}) a.remove(k), b.remove(k);
    QVERIFY(!a.isEmpty());
    QCOMPARE(a, b);
    RUN_EXPECT(table, 0, QStringList{"report", rec});
    QVERIFY(table.out.contains("diagnosis"));
    for (const QString format : {"csv", "jsonl", "chrome-trace"}) {
      const QString out = dir.filePath("out." + format);
      RUN_EXPECT(exp, 0, QStringList{"export", rec, "--format", format, "-o", out});
      QVERIFY(QFileInfo(out).size() > 1000);
      QVERIFY(!QFileInfo::exists(out + ".partial"));
    }
    RUN_EXPECT(badFormat, 2, QStringList{"export", rec, "--format", "xml", "-o", dir.filePath("x")});
    RUN_EXPECT(noOutput, 2, QStringList{"export", rec, "--format", "csv"});
  }

  // A recording is a workload: the twin runs its own run's traffic again (on the recorded scenario
  // when none is given), holds itself against the run (`calibrate check --against`: every error 0 on
  // the twin's own run), and a sweep replays it under other policies. A file that is no recording,
  // or the two ways of naming measurements at once, are refused.
  void recordingIsAWorkload() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(sim, 0,
               QStringList{"simulate", "--scenario", "e2-cold-d", "--duration", "400", "--quiet", "--format", "json",
                           "--record", rec});
    RUN_EXPECT(again, 0, QStringList{"simulate", "--trace", rec, "--duration", "400", "--quiet", "--format", "json"});
    QJsonObject a = QJsonDocument::fromJson(sim.out).object(), b = QJsonDocument::fromJson(again.out).object();
    for (const char* k : {"wall_seconds", "skipped_records"}) a.remove(k), b.remove(k);
    QCOMPARE(b.value("scenario").toString(), QString("e2-cold-d"));  // the recording's own scenario
    QCOMPARE(a, b);
    RUN_EXPECT(what_if, 0,
               QStringList{"simulate", "--trace", rec, "--duration", "400", "--policy", "kv-aware", "--set", "K=200",
                           "--quiet", "--format", "json"});
    QVERIFY(QJsonDocument::fromJson(what_if.out).object() != QJsonDocument::fromJson(again.out).object());
    RUN_EXPECT(check, 0,
               QStringList{"calibrate", "check", "--against", rec, "--seeds", "2", "--duration", "400", "--quiet"});
    QVERIFY2(check.out.contains("the twin against") && check.out.contains("ttft_p90_s") &&
                 check.out.contains("decode_share[2]"),
             check.out.constData());
    for (const auto& line : check.out.split('\n'))
      if (line.startsWith("run ")) QVERIFY2(line.endsWith("+0.0%") || line.endsWith("+0.0 pts"), line.constData());
    RUN_EXPECT(sweep, 0,
               QStringList{"sweep", "--scenario", "e2-cold-d", "--trace", rec, "--grid", "K=0,200", "--seeds", "2",
                           "--duration", "300", "--out", dir.filePath("whatif"), "--quiet"});
    QFile summary(dir.filePath("whatif/summary.md"));
    QVERIFY(summary.open(QIODevice::ReadOnly));
    const QByteArray md = summary.readAll();
    QVERIFY2(md.contains("| K=200 |"), md.constData());
    // The recorded workload is fixed and kv-aware draws nothing: both seeds ran the same, so no verdict.
    QVERIFY2(md.contains("the 2 seeds gave the same runs: n = 1"), md.constData());
    RUN_EXPECT(both, 2, QStringList{"calibrate", "check", "--against", rec, "--target", rec});
    QVERIFY2(both.err.contains("one of the two"), both.err.constData());
    QFile junk(dir.filePath("junk.kvrec"));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write("not a recording");
    junk.close();
    RUN_EXPECT(bad, 1, QStringList{"simulate", "--trace", junk.fileName(), "--scenario", "e2-cold-d", "--quiet"});
    QVERIFY2(bad.err.contains("junk.kvrec"), bad.err.constData());
  }

  // Six recorded runs (a live sweep's seeds, say) are six replicates: every point replays each, the
  // pairs are the runs, and with six differing pairs the sign-flip test has its 2^6 patterns.
  void recordedRunsAreReplicates() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir("runs"));
    for (int seed = 1; seed <= 6; ++seed) {
      RUN_EXPECT(
          sim, 0,
          QStringList{"simulate", "--scenario", "e2-cold-d", "--duration", "300", "--seed", QString::number(seed),
                      "--quiet", "--record", dir.filePath(QString("runs/night-%1.kvrec").arg(seed))});
    }
    RUN_EXPECT(sweep, 0,
               QStringList{"sweep", "--trace", dir.filePath("runs"), "--grid", "K=0,200", "--duration", "300", "--out",
                           dir.filePath("whatif"), "--quiet"});
    QFile summary(dir.filePath("whatif/summary.md"));
    QVERIFY(summary.open(QIODevice::ReadOnly));
    const QByteArray md = summary.readAll();
    QVERIFY2(md.startsWith("# Sweep: e2-cold-d"), md.constData());  // the recordings' own scenario
    QVERIFY2(md.contains("- seeds: 1, 2, 3, 4, 5, 6 (paired"), md.constData());
    QVERIFY2(md.contains("replicates are 6 recorded runs") && md.contains("seed 6 = night-6.kvrec"), md.constData());
    QVERIFY2(md.contains("sign-flip (exact, 64 patterns)"), md.constData());
    QVERIFY2(!md.contains("gave the same runs"), md.constData());
    // Seeds that do not match the runs one to one are refused before any run.
    RUN_EXPECT(mismatch, 1,
               QStringList{"sweep", "--scenario", "e2-cold-d", "--trace", dir.filePath("runs"), "--grid", "K=0,200",
                           "--seeds", "3", "--out", dir.filePath("bad"), "--quiet"});
    QVERIFY2(mismatch.err.contains("6 recorded runs are as many replicates"), mismatch.err.constData());
    QVERIFY(!QDir(dir.filePath("bad")).exists());
  }

  void reportOfDamagedOrForeignFiles() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(sim, 0, QStringList{"simulate", "--duration", "300", "--quiet", "--record", rec});
    QFile f(rec);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    f.close();
    // Cut in the middle: the readable part still reports, with a warning naming the cut.
    const QString cut = dir.filePath("cut.kvrec");
    QFile c(cut);
    QVERIFY(c.open(QIODevice::WriteOnly));
    c.write(bytes.left(bytes.size() / 2));
    c.close();
    RUN_EXPECT(partial, 0, QStringList{"report", cut, "--format", "json"});
    QVERIFY2(partial.err.contains("truncat"), partial.err.constData());
    // Not a recording, missing, empty: exit 1 with the file named.
    const QString text = dir.filePath("notes.txt");
    QFile t(text);
    QVERIFY(t.open(QIODevice::WriteOnly));
    t.write("hello\n");
    t.close();
    const QString empty = dir.filePath("empty.kvrec");
    QFile e(empty);
    QVERIFY(e.open(QIODevice::WriteOnly));
    e.close();
    for (const QString& bad : {text, empty, dir.filePath("missing.kvrec")}) {
      RUN_EXPECT(r, 1, QStringList{"report", bad});
      QVERIFY2(r.err.contains(QFileInfo(bad).fileName().toUtf8()), r.err.constData());
      QVERIFY(r.out.isEmpty());
    }
  }

  // kill -9 of a recording process: the file opens, the readable part reports, and at most about
  // the last second of the run is lost (the recorder hands its buffer to the OS every second).
  void killedRecorderLeavesAReadableRecording() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("killed.kvrec");
    QProcess serve;
    serve.start(KVSCOPE_CLI,
                {"serve", "--scenario", "e3-load-floor", "--listen", "127.0.0.1:0", "--speed", "200", "--record", rec});
    QVERIFY(serve.waitForStarted(kTimeoutMs));
    QTRY_VERIFY_WITH_TIMEOUT(serve.canReadLine() || serve.readAllStandardOutput().contains("listening"), 30000);
    QTest::qWait(3000);  // ~600 simulated seconds at 200x
    serve.kill();        // SIGKILL: no chance to close the recording
    QVERIFY(serve.waitForFinished(kTimeoutMs));
    QCOMPARE(serve.exitStatus(), QProcess::CrashExit);
    RUN_EXPECT(rep, 0, QStringList{"report", rec, "--format", "json"});
    QVERIFY2(rep.err.contains("truncat") || rep.err.contains("no index"), rep.err.constData());
    const QJsonObject summary = QJsonDocument::fromJson(rep.out).object();
    // 3 s of wall time at 200x is ~600 s; losing at most the last second leaves well over 200 s.
    QVERIFY2(summary["sim_seconds"].toDouble() > 200, rep.out.left(300).constData());
    QVERIFY(summary["requests"].toObject()["total"].toInt() > 0);
  }
};

QTEST_GUILESS_MAIN(TestCliRecordings)
#include "test_cli_recordings.moc"
