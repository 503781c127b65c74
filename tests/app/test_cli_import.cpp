// `kvscope-cli import` and `kvscope-cli logs`, end to end with the real binary on a multi-file log
// set in upstream's formats (tests/data/import_run: P0's scheduler and Mooncake logs, D0-D2's
// scheduler logs; make_logs.py says what happens in them and where each line's format comes from).
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <sys/stat.h>

#include <cmath>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

namespace {

QString runDir() { return QString::fromStdString(testDataPath("import_run")); }
QString runFile(const QString& name) { return runDir() + "/" + name; }

// mode -> subjects, from `report --format json`.
QMap<QString, QStringList> findings(const QByteArray& json) {
  QMap<QString, QStringList> out;
  for (const auto& f : QJsonDocument::fromJson(json).object().value("diagnosis").toArray()) {
    QStringList subjects;
    for (const auto& s : f.toObject().value("subjects").toArray()) subjects << s.toString();
    out[f.toObject().value("mode").toString()] = subjects;
  }
  return out;
}

QString copyWith(const QTemporaryDir& dir, const QString& from, const QString& name, const QByteArray& extra_line,
                 int at) {
  QFile in(from);
  if (!in.open(QIODevice::ReadOnly)) return {};
  QList<QByteArray> lines = in.readAll().split('\n');
  lines.insert(at, extra_line);
  QString path = dir.filePath(name);
  QFile out(path);
  if (!out.open(QIODevice::WriteOnly)) return {};
  out.write(lines.join('\n'));
  return path;
}

}  // namespace

class TestCliImport : public QObject {
  Q_OBJECT
 private slots:
  // The crash, the link failure and the cold D of the log set, named by the report of the recording.
  void importNamesTheRunsFailures() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(imp, 0, QStringList{"import", "--cluster", runFile("cluster.yaml"), "-o", rec});
    QVERIFY(QFileInfo(rec).size() > 1000);
    QVERIFY(!QFileInfo::exists(dir.filePath(".run.kvrec.partial")));
    // Every line of the set is one the parsers know (the traceback folded into its crash).
    QVERIFY2(imp.err.contains("p0.log: 637 lines, 637 known, 0 unknown, 0 malformed"), imp.err.constData());
    QVERIFY2(imp.err.contains("d1.log: 364 lines, 359 known, 0 unknown, 0 malformed, 5 traceback"),
             imp.err.constData());
    QVERIFY2(imp.err.contains("2026-08-20 09:00:00.000 to 2026-08-20 09:09:59.000"), imp.err.constData());
    RUN_EXPECT(rep, 0, QStringList{"report", rec, "--format", "json"});
    const auto f = findings(rep.out);
    QVERIFY2(f.contains("A") && f.contains("B") && f.contains("D"), rep.out.constData());
    QCOMPARE(f["A"], QStringList{"P0->D0"});
    QCOMPARE(f["B"], QStringList{"D2"});
    QCOMPARE(f["D"], QStringList{"D1"});
    const QJsonObject summary = QJsonDocument::fromJson(rep.out).object();
    QCOMPARE(summary.value("worker_crashes").toInt(), 1);
    QCOMPARE(summary.value("corrections").toInt(), 1);
    // D1's restarted scheduler printed again: the recording says it came back.
    const QString jsonl = dir.filePath("events.jsonl");
    RUN_EXPECT(exp, 0, QStringList{"export", rec, "--format", "jsonl", "-o", jsonl});
    QFile events(jsonl);
    QVERIFY(events.open(QIODevice::ReadOnly));
    int restarts = 0, snapshots = 0;
    for (const QByteArray& line : events.readAll().split('\n')) {
      const QJsonObject e = QJsonDocument::fromJson(line).object();
      if (e.value("kind").toString() == "restart") {
        ++restarts;
        QCOMPARE(e.value("worker").toInt(), 1);
        // The first batch line of the restarted scheduler is at 09:06:00 (360 s).
        QVERIFY(e.value("t_us").toDouble() >= 360e6 && e.value("t_us").toDouble() < 362e6);
      }
      snapshots += e.value("kind").toString() == "snapshot";
    }
    QCOMPARE(restarts, 1);
    QVERIFY2(snapshots >= 599 && snapshots <= 601, qPrintable(QString::number(snapshots)));
  }

  // Files named on the command line: no address book, so a transfer failure names no D pair, but the
  // crash and the cold D need none.
  // Decode logs with SGLang's request lines (--log-requests, the prefixed form of builds before
  // 0.5.10; tests/data/upstream_logs/sglang_requests.log has every form): the recording holds each
  // request with its sizes and cached tokens, and the twin runs it as a workload, building the prompt
  // chains the reported hits need (and saying so).
  void requestLinesMakeATwinWorkload() {
    QTemporaryDir dir;
    int finished = 0;
    for (int d = 0; d < 2; ++d) {
      QFile log(dir.filePath(QString("d%1.log").arg(d)));
      QVERIFY(log.open(QIODevice::WriteOnly));
      for (int turn = 1; turn <= 3; ++turn)
        for (int s = 0; s < 3; ++s, ++finished) {
          const int session = 1000 + 10 * d + s, second = 10 * turn + s + 5 * d;
          const int prompt = 4000 * turn + 300 * s, cached = turn == 1 ? 0 : 4000 * (turn - 1) + 300 * s;
          log.write(QString("[2026-08-20 09:00:%1] Finish: obj=GenerateReqInput(rid='%2', stream=False, "
                            "session_params={'id': '%3', 'rid': None, 'offset': None, 'replace': None}, "
                            "bootstrap_host=None, bootstrap_room=None, received_time=%4), out={'meta_info': {'id': "
                            "'%2', 'finish_reason': {'type': 'stop', 'matched': 151645}, 'prompt_tokens': %5, "
                            "'weight_version': 'default', 'total_retractions': 0, 'reasoning_tokens': 0, "
                            "'completion_tokens': 200, 'cached_tokens': %6, 'dp_rank': None, 'e2e_latency': 2.5}}\n")
                        .arg(second, 2, 10, QChar('0'))
                        .arg(QString("%1").arg(session * 100 + turn, 32, 10, QChar('0')))
                        .arg(session)
                        .arg(second)
                        .arg(prompt)
                        .arg(cached)
                        .toUtf8());
        }
    }
    const QString rec = dir.filePath("requests.kvrec");
    RUN_EXPECT(imp, 0,
               QStringList{"import", "--log", "D0=" + dir.filePath("d0.log"), "--log", "D1=" + dir.filePath("d1.log"),
                           "-o", rec});
    RUN_EXPECT(report, 0, QStringList{"report", rec, "--format", "json"});
    const QJsonObject measured = QJsonDocument::fromJson(report.out).object();
    const QJsonObject requests = measured.value("requests").toObject();
    QCOMPARE(requests.value("total").toInt(), finished);
    QCOMPARE(requests.value("completed").toInt(), finished);
    QVERIFY(measured.value("apc").toDouble() > 0.4);  // the reported hits: (0 + 4000 + 8000 + ...) / prompts
    RUN_EXPECT(twin, 0,
               QStringList{"simulate", "--trace", rec, "--scenario", "e3-load-floor", "--format", "json", "--quiet"});
    const QJsonObject predicted = QJsonDocument::fromJson(twin.out).object();
    QCOMPARE(predicted.value("requests").toObject().value("total").toInt(), finished);
    // The reuse the engines reported, rebuilt as prefix chains (to the chains' 256-token blocks).
    QVERIFY(std::abs(predicted.value("apc").toDouble() - measured.value("apc").toDouble()) < 0.03);
    QVERIFY2(twin.out.contains("prefix chains built from the cached tokens"), twin.out.constData());
  }

  // The bundled run with its requests (cluster-requests.yaml: each decode server's scheduler log and
  // its --log-requests JSON lines): the recording holds every finished request the lines name, with
  // the hit rate they report, and `calibrate check --against` compares the twin with exactly those.
  void theBundledRunWithItsRequestsIsATwinTarget() {
    int lines = 0;
    double prompt = 0, cached = 0;
    for (const char* name : {"d0-requests.log", "d1-requests.log", "d2-requests.log"}) {
      QFile log(runFile(name));
      QVERIFY(log.open(QIODevice::ReadOnly));
      for (const QByteArray& line : log.readAll().split('\n')) {
        if (line.trimmed().isEmpty()) continue;
        const QJsonObject meta =
            QJsonDocument::fromJson(line).object().value("out").toObject().value("meta_info").toObject();
        prompt += meta.value("prompt_tokens").toDouble();
        cached += meta.value("cached_tokens").toDouble();
        ++lines;
      }
    }
    QVERIFY(lines > 500);
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(imp, 0, QStringList{"import", "--cluster", runFile("cluster-requests.yaml"), "-o", rec});
    RUN_EXPECT(report, 0, QStringList{"report", rec, "--format", "json"});
    const QJsonObject measured = QJsonDocument::fromJson(report.out).object();
    QCOMPARE(measured.value("requests").toObject().value("completed").toInt(), lines);
    QVERIFY(std::abs(measured.value("apc").toDouble() - cached / prompt) < 1e-9);
    // The scheduler logs' failures are still named beside the requests.
    QVERIFY(findings(report.out).contains("D"));
    RUN_EXPECT(
        check, 0,
        QStringList{"calibrate", "check", "--against", rec, "--scenario", "e3-load-floor", "--seeds", "2", "--quiet"});
    const QString apc = QString::number(cached / prompt, 'f', 3);
    QVERIFY2(
        QString::fromUtf8(check.out).contains(QRegularExpression("run +apc +" + QRegularExpression::escape(apc) + " ")),
        check.out.constData());
    QVERIFY2(check.out.contains("prompt prefix chains built from the cached tokens"), check.out.constData());
  }

  void filesOnTheCommandLine() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(imp, 0,
               QStringList{"import", "--log", "P0=" + runFile("p0.log"), "--log", "D0=" + runFile("d0.log"), "--log",
                           "D1=" + runFile("d1.log"), "--log", "D2=" + runFile("d2.log"), "--mooncake-log",
                           "P0=" + runFile("p0-mooncake.log"), "-o", rec});
    RUN_EXPECT(rep, 0, QStringList{"report", rec, "--format", "json"});
    const auto f = findings(rep.out);
    QCOMPARE(f.value("B"), QStringList{"D2"});
    QCOMPARE(f.value("D"), QStringList{"D1"});
    RUN_EXPECT(bad, 2, QStringList{"import", "--log", runFile("d0.log"), "-o", rec});
    QVERIFY2(bad.err.contains("expected WORKER=PATH"), bad.err.constData());
  }

  // --from/--to keep the window only; the recording starts at --from.
  void aWindow() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(imp, 0,
               QStringList{"import", "--cluster", runFile("cluster.yaml"), "--from", "2026-08-20 09:04:00", "--to",
                           "2026-08-20T09:06:30", "-o", rec});
    QVERIFY2(imp.err.contains("outside --from/--to left out"), imp.err.constData());
    RUN_EXPECT(rep, 0, QStringList{"report", rec, "--format", "json"});
    const QJsonObject summary = QJsonDocument::fromJson(rep.out).object();
    QVERIFY2(qAbs(summary.value("sim_seconds").toDouble() - 150) < 1.5, rep.out.constData());
    QVERIFY(findings(rep.out).contains("D"));   // the crash at 09:04:59 is inside
    QVERIFY(!findings(rep.out).contains("A"));  // the link failure at 09:07 is not
    RUN_EXPECT(empty, 1,
               QStringList{"import", "--cluster", runFile("cluster.yaml"), "--from", "2027-01-01 00:00:00", "-o", rec});
    QVERIFY2(empty.err.contains("no line of the logs falls inside"), empty.err.constData());
    RUN_EXPECT(badTime, 2, QStringList{"import", "--cluster", runFile("cluster.yaml"), "--from", "09:04", "-o", rec});
    RUN_EXPECT(backwards, 2,
               QStringList{"import", "--cluster", runFile("cluster.yaml"), "--from", "2026-08-20 09:05:00", "--to",
                           "2026-08-20 09:04:00", "-o", rec});
  }

  // A malformed line is counted; --strict stops at it, names file and line, and writes nothing.
  void malformedLinesAndStrict() {
    QTemporaryDir dir;
    const QString d0 =
        copyWith(dir, runFile("d0.log"), "d0.log",
                 "[2026-08-20 09:00:05 TP0] Decode batch, #running-req: x1, #token: 5, token usage: 0.10, "
                 "cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0",
                 3);
    QVERIFY(!d0.isEmpty());
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(lenient, 0, QStringList{"import", "--log", "D0=" + d0, "--log", "D2=" + runFile("d2.log"), "-o", rec});
    QVERIFY2(lenient.err.contains("400 lines, 399 known, 0 unknown, 1 malformed"), lenient.err.constData());
    // The recording keeps what the import could not use: `report` says it.
    RUN_EXPECT(rep, 0, QStringList{"report", rec});
    QVERIFY2(rep.out.contains("notes on the source:\n  d0.log: 1 of 400 lines malformed"), rep.out.constData());
    QVERIFY(QFile::remove(rec));
    RUN_EXPECT(strict, 1,
               QStringList{"import", "--strict", "--log", "D0=" + d0, "--log", "D2=" + runFile("d2.log"), "-o", rec});
    QVERIFY2(strict.err.contains("d0.log:4: field '#running-req'"), strict.err.constData());
    QVERIFY(!QFileInfo::exists(rec));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).filter("partial").size(), 0);
  }

  // Files that cannot be ordered or read: exit 1, the file named, nothing written.
  void unreadableOrUnorderable() {
    QTemporaryDir dir;
    const QString rec = dir.filePath("run.kvrec");
    QFile untimed(dir.filePath("untimed.log"));
    QVERIFY(untimed.open(QIODevice::WriteOnly));
    untimed.write(
        "[TP0] Decode batch, #running-req: 3, #token: 500, token usage: 0.10, cuda graph: True, gen throughput "
        "(token/s): 1.00, #queue-req: 0\n");
    untimed.close();
    RUN_EXPECT(alone, 0, QStringList{"import", "--log", "D0=" + untimed.fileName(), "-o", rec});
    RUN_EXPECT(mixed, 1,
               QStringList{"import", "--log", "D0=" + untimed.fileName(), "--log", "D1=" + runFile("d1.log"), "-o",
                           dir.filePath("mixed.kvrec")});
    QVERIFY2(mixed.err.contains("untimed.log") && mixed.err.contains("no line carries a time"), mixed.err.constData());
    QVERIFY(!QFileInfo::exists(dir.filePath("mixed.kvrec")));
    RUN_EXPECT(missing, 1,
               QStringList{"import", "--log", "D0=" + dir.filePath("nope.log"), "-o", dir.filePath("m.kvrec")});
    QVERIFY2(missing.err.contains("nope.log"), missing.err.constData());
  }

  // Saved /metrics scrapes (upstream's text, tests/data/upstream_metrics) after time lines: their
  // gauges reach the snapshots and a counter's rise becomes an event at the scrape's time.
  void savedScrapes() {
    QTemporaryDir dir;
    const auto read = [](const QString& name) {
      QFile f(QString::fromStdString(testDataPath("upstream_metrics/" + name.toStdString())));
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QByteArray first = read("sglang_decode_old.prom"), second = read("sglang_decode_old_2.prom");
    QVERIFY(!first.isEmpty() && !second.isEmpty());
    const QString scrapes = dir.filePath("d0.prom");
    QFile out(scrapes);
    QVERIFY(out.open(QIODevice::WriteOnly));
    // `date '+%F %T'`, then Unix seconds (`date +%s.%N`): 1787216415.5 is 2026-08-20 09:00:15.5 UTC.
    out.write("2026-08-20 09:00:10\n" + first + "1787216415.5\n" + second);
    out.close();
    const QString rec = dir.filePath("run.kvrec");
    RUN_EXPECT(imp, 0,
               QStringList{"import", "--log", "P0=" + runFile("p0.log"), "--log", "D0=" + runFile("d0.log"),
                           "--metrics", "D0=" + scrapes, "-o", rec});
    QVERIFY2(imp.err.contains("d0.prom: 2 scrapes, 2 with SGLang metrics"), imp.err.constData());
    const QString jsonl = dir.filePath("events.jsonl");
    RUN_EXPECT(exp, 0, QStringList{"export", rec, "--format", "jsonl", "-o", jsonl});
    QFile events(jsonl);
    QVERIFY(events.open(QIODevice::ReadOnly));
    bool rose = false, capacity = false;
    for (const QByteArray& line : events.readAll().split('\n')) {
      const QJsonObject e = QJsonDocument::fromJson(line).object();
      const double t = e.value("t_us").toDouble();
      if (e.value("kind").toString() == "transfer_end" &&
          e.value("reason").toString().contains("num_transfer_failed_reqs_total rose by 1")) {
        QCOMPARE(t, 15.5e6);
        rose = true;
      }
      // max_total_num_tokens from the first scrape is D0's capacity from then on.
      if (e.value("kind").toString() == "snapshot" && t == 11e6)
        capacity = e.value("workers").toArray().first().toObject().value("kv_capacity").toInteger() == 444725;
    }
    QVERIFY(rose);
    QVERIFY(capacity);
    // Exposition text before any time line: which file, which line, what was expected.
    QFile bad(dir.filePath("bad.prom"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(first);
    bad.close();
    RUN_EXPECT(untimed, 1,
               QStringList{"import", "--log", "D0=" + runFile("d0.log"), "--metrics", "D0=" + bad.fileName(), "-o",
                           dir.filePath("bad.kvrec")});
    QVERIFY2(untimed.err.contains("bad.prom:1:") && untimed.err.contains("expected the time of the scrape"),
             untimed.err.constData());
    QVERIFY(!QFileInfo::exists(dir.filePath("bad.kvrec")));
  }

  // Two records years apart (a host clock set forward): snapshots for the gap's first hour, not for years.
  void aLongGap() {
    QTemporaryDir dir;
    QFile log(dir.filePath("d0.log"));
    QVERIFY(log.open(QIODevice::WriteOnly));
    for (const char* when : {"2026-08-20 09:00:00", "2031-01-01 00:00:00"})
      log.write(QByteArray("[") + when +
                " TP0] Decode batch, #running-req: 3, #token: 500, token usage: 0.10, cuda graph: "
                "True, gen throughput (token/s): 1.00, #queue-req: 0\n");
    log.close();
    const QString rec = dir.filePath("run.kvrec"), jsonl = dir.filePath("events.jsonl");
    RUN_EXPECT(imp, 0, QStringList{"import", "--log", "D0=" + log.fileName(), "-o", rec});
    RUN_EXPECT(exp, 0, QStringList{"export", rec, "--format", "jsonl", "-o", jsonl});
    QFile events(jsonl);
    QVERIFY(events.open(QIODevice::ReadOnly));
    const int snapshots = static_cast<int>(events.readAll().count("\"kind\":\"snapshot\""));
    QVERIFY2(snapshots >= 3600 && snapshots <= 3602, qPrintable(QString::number(snapshots)));
  }

  // `logs`: one JSON object per record, with what it maps to.
  void logsPrintsEachRecord() {
    RUN_EXPECT(run, 0, QStringList{"logs", "--worker", "D1", "--cluster", runFile("cluster.yaml"), runFile("d1.log")});
    int batches = 0, crashes = 0, lines = 0;
    for (const QByteArray& line : run.out.split('\n')) {
      if (line.isEmpty()) continue;
      ++lines;
      QJsonParseError error;
      const QJsonObject r = QJsonDocument::fromJson(line, &error).object();
      QVERIFY2(error.error == QJsonParseError::NoError, line.constData());
      if (r.value("kind").toString() == "decode_batch") {
        ++batches;
        QVERIFY(r.value("gauges").toObject().contains("running-req"));
      }
      if (r.value("kind").toString() == "scheduler_exception") {
        ++crashes;
        QCOMPARE(r.value("line").toInt(), 199);  // where the traceback starts
        const QJsonObject e = r.value("events").toArray().first().toObject();
        QCOMPARE(e.value("kind").toString(), QString("crash"));
        QCOMPARE(e.value("worker").toInt(), 1);  // D1, by the cluster file
      }
    }
    QCOMPARE(crashes, 1);
    QCOMPARE(batches, 356);
    QCOMPARE(lines, 359);  // 364 lines, 5 of them the traceback folded into the crash
  }

  // Inputs that are not files: a FIFO would block for ever, a directory read as an empty log, an
  // endless line took the machine's memory. Each is refused (or, a line, counted) at once.
  void inputsThatAreNotFiles() {
    QTemporaryDir dir;
    const QString fifo = dir.filePath("fifo");
    QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
    const QList<QStringList> refused{
        {"logs", fifo},
        {"logs", dir.path()},
        {"import", "--log", "D0=" + fifo, "-o", dir.filePath("a.kvrec")},
        {"import", "--metrics", "D0=" + dir.path(), "-o", dir.filePath("b.kvrec")},
        {"report", fifo},
        {"sweep", fifo, "--out", dir.filePath("s")},
        {"simulate", "--scenario", fifo},
        {"calibrate", "check", "--scenario", "e3-load-floor", "--target", fifo},
        {"import", "--cluster", fifo, "-o", dir.filePath("c.kvrec")},
    };
    for (const QStringList& args : refused) {
      RUN_EXPECT(r, 1, args);
      QVERIFY2(r.err.contains("FIFO") || r.err.contains("directory") || r.err.contains("not a regular file"),
               qPrintable(describe(args, r)));
    }
    QVERIFY(!QFile::exists(dir.filePath("a.kvrec")) && !QFile::exists(dir.filePath("b.kvrec")));

    // An empty log: nothing to import, and no word of a --from/--to window nobody gave.
    QFile empty(dir.filePath("empty.log"));
    QVERIFY(empty.open(QIODevice::WriteOnly));
    empty.close();
    RUN_EXPECT(nothing, 1, QStringList{"import", "--log", "D0=" + empty.fileName(), "-o", dir.filePath("e.kvrec")});
    QVERIFY2(nothing.err.contains("no timed line") && !nothing.err.contains("--from"), nothing.err.constData());

    // A sweep file of 65 MiB (sparse): refused by its size, not read into memory.
    QFile big(dir.filePath("big.json"));
    QVERIFY(big.open(QIODevice::WriteOnly) && big.resize(65ll << 20));
    big.close();
    RUN_EXPECT(huge, 1, QStringList{"sweep", big.fileName(), "--out", dir.filePath("s2")});
    QVERIFY2(huge.err.contains("larger than 64 MiB"), huge.err.constData());

    // A 2 MiB line among log lines: one malformed record with its line number, the next line read.
    QFile log(dir.filePath("d0.log"));
    QVERIFY(log.open(QIODevice::WriteOnly));
    log.write(QByteArray(2 << 20, 'x') + "\n");
    QFile real(runFile("d1.log"));
    QVERIFY(real.open(QIODevice::ReadOnly));
    log.write(real.readLine());
    log.close();
    RUN_EXPECT(lines, 0, QStringList{"logs", log.fileName()});
    const QList<QByteArray> records = lines.out.trimmed().split('\n');
    QCOMPARE(records.size(), 2);
    QVERIFY2(records[0].contains("\"line\":1") && records[0].contains("longer than 1048576 bytes"),
             records[0].left(300).constData());
    QVERIFY2(records[1].contains("\"line\":2"), records[1].left(300).constData());

    // A saved scrape whose first line carries escape sequences: quoted escaped, never raw.
    QFile scrape(dir.filePath("d0.prom"));
    QVERIFY(scrape.open(QIODevice::WriteOnly));
    scrape.write("\x1b]0;pwned\x07\x1b[2J\n");
    scrape.close();
    RUN_EXPECT(esc, 1, QStringList{"import", "--metrics", "D0=" + scrape.fileName(), "-o", dir.filePath("d.kvrec")});
    QVERIFY2(!esc.err.contains('\x1b') && !esc.err.contains('\x07'), esc.err.constData());
    QVERIFY2(esc.err.contains("\\x1b]0;pwned\\x07"), esc.err.constData());
  }

  // `--format jsonl` (its only value) in both spellings prints the same records; its storage once
  // died with the function that declared it (a use-after-free that segfaulted every time).
  void logsFormatFlag() {
    RUN_EXPECT(plain, 0, QStringList{"logs", runFile("d1.log")});
    RUN_EXPECT(spaced, 0, QStringList{"logs", runFile("d1.log"), "--format", "jsonl"});
    RUN_EXPECT(joined, 0, QStringList{"logs", "--format=jsonl", runFile("d1.log")});
    QVERIFY(plain.out.count('\n') > 300);
    QCOMPARE(spaced.out, plain.out);
    QCOMPARE(joined.out, plain.out);
    RUN_EXPECT(bad, 2, QStringList{"logs", runFile("d1.log"), "--format", "csv"});
    Q_UNUSED(bad);
  }
};

QTEST_GUILESS_MAIN(TestCliImport)
#include "test_cli_import.moc"
