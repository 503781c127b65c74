// kvscope-cli end to end: the real binary run with QProcess on real files in a temporary directory.
// Checks the JSON summary's keys and consistency, that --set/--seed take effect and runs are
// reproducible, the exit codes (0 ok, 1 bad input with an actionable message on stderr and nothing on
// stdout, 2 usage error), the --events file (complete or absent, never half-written), the listing
// commands, and a replay of the real agentic traces (recordings: test_cli_recordings.cpp). Simulated durations stay
// short so the whole file runs in a few seconds.
#include <QtTest>

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <cmath>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

namespace {

QJsonObject parseObject(const QByteArray& text, QString* error) {
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(text, &pe);
  if (pe.error != QJsonParseError::NoError) {
    *error = QStringLiteral("not JSON: %1 at offset %2").arg(pe.errorString()).arg(pe.offset);
    return {};
  }
  if (!doc.isObject()) {
    *error = QStringLiteral("not one JSON object");
    return {};
  }
  return doc.object();
}

bool writeFile(const QString& path, const QByteArray& content) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return f.write(content) == content.size();
}

const QStringList kBundled{"block-level-eviction", "cascade",           "e2-cold-d",   "e3-load-floor", "evict-storm",
                           "invariant-crash",      "lab-000",           "lab-004",     "lab-8c",        "lab-e-burst",
                           "lab-pd-2p6d",          "lab-pd-4p4d",       "lab-pd-6p2d", "lab-w600-8c",   "many-workers",
                           "reseed-storm",         "unified-vs-lmetric"};
const QStringList kPolicies{"kv-aware",      "exclusive-overlap",  "linear",          "lmetric", "unified",
                            "unified-gated", "leastwork",          "leastwork-kappa", "sticky",  "load-only",
                            "round-robin",   "sglang-cache-aware", "dynamo-kv"};
const QStringList kShort{"simulate", "--scenario", "e3-load-floor", "--duration", "300", "--quiet"};

QString errText(const Run& r) { return QString::fromUtf8(r.err); }

// A Mooncake trace whose line 2 has a string where input_length must be an integer.
const QByteArray kBadMooncake =
    "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 10, \"hash_ids\": [1, 2]}\n"
    "{\"timestamp\": 10, \"input_length\": \"big\", \"output_length\": 10, \"hash_ids\": [1]}\n"
    "{\"timestamp\": 20, \"input_length\": 600, \"output_length\": 10, \"hash_ids\": [1, 3]}\n";

}  // namespace

class TestCli : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

 private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(KVSCOPE_CLI).isExecutable(),
             qPrintable("kvscope-cli is not built at " + KVSCOPE_CLI + " (build the kvscope-cli target first)"));
    QVERIFY(tmp_.isValid());
    QVERIFY(writeFile(tmp_.filePath("bad-line2.jsonl"), kBadMooncake));
  }

  // ---- the JSON summary ----------------------------------------------------------------------------

  void jsonSummaryHasEveryKey() {
    RUN_EXPECT(r, 0, kShort + QStringList{"--format", "json"});
    QString error;
    const QJsonObject j = parseObject(r.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error + "\n" + QString::fromUtf8(r.out.left(400))));

    for (const char* key : {"scenario",         "policy",         "seed",        "sim_seconds",     "wall_seconds",
                            "requests",         "failure_rate",   "e2e_s",       "ttft_s",          "workers",
                            "evictions",        "seeds",          "reseeds",     "direct_appends",  "link_dead_events",
                            "aborted_requests", "worker_crashes", "corrections", "token_imbalance", "diagnosis"})
      QVERIFY2(j.contains(key), key);

    QCOMPARE(j["scenario"].toString(), QStringLiteral("e3-load-floor"));
    QCOMPARE(j["policy"].toString(), QStringLiteral("kv-aware"));
    QVERIFY(j["seed"].isDouble());
    QCOMPARE(j["sim_seconds"].toDouble(), 300.0);
    QVERIFY(j["wall_seconds"].isDouble() && j["wall_seconds"].toDouble() >= 0);
    for (const char* key : {"seeds", "reseeds", "direct_appends", "link_dead_events", "aborted_requests",
                            "worker_crashes", "corrections"})
      QVERIFY2(j[key].isDouble() && j[key].toDouble() >= 0, key);
    QVERIFY(j["token_imbalance"].isNull() || j["token_imbalance"].toDouble() >= 1.0);

    const QJsonObject req = j["requests"].toObject();
    for (const char* key : {"total", "completed", "failed"}) QVERIFY2(req[key].isDouble(), key);
    const qint64 total = req["total"].toInteger(), completed = req["completed"].toInteger(),
                 failed = req["failed"].toInteger();
    QVERIFY(total > 0);
    QVERIFY(completed > 0);
    QCOMPARE(completed + failed, total);
    const double rate = j["failure_rate"].toDouble(-1);
    QVERIFY2(rate >= 0 && rate <= 1, qPrintable(QString::number(rate)));
    QVERIFY(std::fabs(rate - static_cast<double>(failed) / static_cast<double>(total)) < 1e-9);

    for (const char* dist : {"e2e_s", "ttft_s"}) {
      const QJsonObject d = j[dist].toObject();
      for (const char* key : {"mean", "p50", "p90", "p99"})
        QVERIFY2(d[key].isDouble() && d[key].toDouble() >= 0, qPrintable(QString("%1.%2").arg(dist, key)));
      QVERIFY2(d["p50"].toDouble() <= d["p90"].toDouble() && d["p90"].toDouble() <= d["p99"].toDouble(), dist);
    }

    const QJsonArray workers = j["workers"].toArray();
    QCOMPARE(workers.size(), 3);
    double share = 0;
    qint64 bindings = 0;
    for (int i = 0; i < workers.size(); ++i) {
      const QJsonObject w = workers[i].toObject();
      for (const char* key : {"id", "role", "bindings", "share", "sessions", "kv_peak_frac", "evictions"})
        QVERIFY2(w.contains(key), qPrintable(QString("workers[%1].%2").arg(i).arg(key)));
      QCOMPARE(w["id"].toString(), QStringLiteral("D%1").arg(i));
      QCOMPARE(w["role"].toString(), QStringLiteral("decode"));
      QVERIFY(w["bindings"].toInteger(-1) >= 0);
      QVERIFY(w["sessions"].toInteger(-1) >= 0);
      QVERIFY(w["evictions"].toInteger(-1) >= 0);
      QVERIFY(w["share"].toDouble(-1) >= 0 && w["share"].toDouble() <= 1);
      QVERIFY(w["kv_peak_frac"].toDouble(-1) >= 0 && w["kv_peak_frac"].toDouble() <= 1);
      share += w["share"].toDouble();
      bindings += w["bindings"].toInteger();
    }
    QVERIFY(bindings > 0);
    QVERIFY2(std::fabs(share - 1.0) < 1e-9, qPrintable(QString::number(share, 'g', 17)));

    const QJsonObject ev = j["evictions"].toObject();
    for (const char* key : {"count", "mean_tokens", "max_tokens", "sessions_hit"})
      QVERIFY2(ev[key].isDouble() && ev[key].toDouble() >= 0, key);

    QVERIFY(j["diagnosis"].isArray());
  }

  // Diagnosis entries carry every field; e2-cold-d (K=0) pins sessions, so it has at least one finding.
  void diagnosisEntriesHaveEveryField() {
    RUN_EXPECT(
        r, 0, QStringList({"simulate", "--scenario", "e2-cold-d", "--duration", "300", "--quiet", "--format", "json"}));
    QString error;
    const QJsonObject j = parseObject(r.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QJsonArray diagnosis = j["diagnosis"].toArray();
    QVERIFY2(!diagnosis.isEmpty(), "e2-cold-d should produce at least one finding");
    for (const auto& v : diagnosis) {
      const QJsonObject f = v.toObject();
      for (const char* key : {"mode", "name", "window_s", "evidence", "suggestion"}) QVERIFY2(f.contains(key), key);
      for (const char* key : {"mode", "name", "evidence", "suggestion"})
        QVERIFY2(f[key].isString() && !f[key].toString().isEmpty(), key);
      const QJsonArray window = f["window_s"].toArray();
      QCOMPARE(window.size(), 2);
      QVERIFY(window[0].toDouble() <= window[1].toDouble());
    }
  }

  // ---- the table, --set, --seed -------------------------------------------------------------------

  void tableHasWorkersAndDiagnosis() {
    RUN_EXPECT(r, 0, kShort);
    const QString out = QString::fromUtf8(r.out);
    for (int i = 0; i < 3; ++i)
      QVERIFY2(out.contains(QRegularExpression(QStringLiteral("^D%1\\s+decode\\s+\\d+").arg(i),
                                               QRegularExpression::MultilineOption)),
               qPrintable(out));
    QVERIFY2(out.contains("diagnosis"), qPrintable(out));
    QVERIFY2(out.contains("e3-load-floor") && out.contains("kv-aware"), qPrintable(out));
  }

  void setTakesEffect() {
    RUN_EXPECT(off, 0, kShort + QStringList{"--format", "json", "--set", "K=0"});
    RUN_EXPECT(on, 0, kShort + QStringList{"--format", "json", "--set", "K=200"});
    QString e1, e2;
    const QJsonObject a = parseObject(off.out, &e1), b = parseObject(on.out, &e2);
    QVERIFY(e1.isEmpty() && e2.isEmpty());
    QList<qint64> ba, bb;
    for (const auto& w : a["workers"].toArray()) ba << w.toObject()["bindings"].toInteger();
    for (const auto& w : b["workers"].toArray()) bb << w.toObject()["bindings"].toInteger();
    QCOMPARE(ba.size(), 3);
    QCOMPARE(bb.size(), 3);
    QVERIFY2(ba != bb, "--set K=0 and --set K=200 gave the same bindings");
    // The load floor is what lifts the cold D: with it, D2 gets more bindings than without.
    QVERIFY2(bb[2] > ba[2], qPrintable(QString("D2 bindings: K=0 %1, K=200 %2").arg(ba[2]).arg(bb[2])));
  }

  void seedChangesResultsAndIsReproducible() {
    auto withoutWall = [](const QByteArray& text) {
      QJsonObject o = QJsonDocument::fromJson(text).object();
      o.remove("wall_seconds");
      return QJsonDocument(o).toJson(QJsonDocument::Compact);
    };
    const QStringList base = kShort + QStringList{"--format", "json"};
    RUN_EXPECT(a, 0, base + QStringList{"--seed", "7"});
    RUN_EXPECT(b, 0, base + QStringList{"--seed", "7"});
    RUN_EXPECT(c, 0, base + QStringList{"--seed", "8"});
    QCOMPARE(QJsonDocument::fromJson(a.out).object()["seed"].toInteger(), 7);
    QCOMPARE(QJsonDocument::fromJson(c.out).object()["seed"].toInteger(), 8);
    QVERIFY(!withoutWall(a.out).isEmpty());
    QCOMPARE(withoutWall(a.out), withoutWall(b.out));
    // Byte-identical output apart from wall_seconds (same key order, same number formatting).
    static const QRegularExpression wall(QStringLiteral("\\n\\s*\"wall_seconds\": [^\\n]*"));
    QCOMPARE(QString::fromUtf8(a.out).remove(wall), QString::fromUtf8(b.out).remove(wall));
    QVERIFY2(withoutWall(a.out) != withoutWall(c.out), "--seed 7 and --seed 8 gave the same summary");
  }

  // ---- exit codes ---------------------------------------------------------------------------------

  void usageErrorsExit2_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("no subcommand") << QStringList{};
    QTest::newRow("unknown subcommand") << QStringList{"nosuch"};
    QTest::newRow("unknown option") << QStringList{"simulate", "--bogus"};
    QTest::newRow("unknown top-level option") << QStringList{"--bogus"};
    QTest::newRow("--format xml") << QStringList{"simulate", "--format", "xml"};
    QTest::newRow("policies --format xml") << QStringList{"policies", "--format", "xml"};
    QTest::newRow("--seed without value") << QStringList{"simulate", "--seed"};
    QTest::newRow("--seed abc") << QStringList{"simulate", "--seed", "abc"};
    QTest::newRow("--duration -5") << QStringList{"simulate", "--duration", "-5"};
    QTest::newRow("--duration 0") << QStringList{"simulate", "--duration", "0"};
    // Checked before any connection is tried (nothing listens on port 1).
    QTest::newRow("mark without --start or --end") << QStringList{"mark", "127.0.0.1:1"};
    QTest::newRow("mark --start and --end") << QStringList{"mark", "127.0.0.1:1", "--start", "a", "--end", "a"};
    QTest::newRow("mark --param without --start") << QStringList{"mark", "127.0.0.1:1", "--end", "--param", "K=1"};
    // A listen address serve refuses: reachable without a token, or malformed.
    QTest::newRow("serve 0.0.0.0 without a token") << QStringList{"serve", "--listen", "0.0.0.0:0", "--duration", "1"};
    QTest::newRow("serve --listen nonsense") << QStringList{"serve", "--listen", "nonsense", "--duration", "1"};
    QTest::newRow("serve --metrics 0.0.0.0") << QStringList{"serve", "--metrics", "0.0.0.0:0", "--duration", "1"};
    QTest::newRow("serve --auth-free-failures -1") << QStringList{"serve", "--auth-free-failures", "-1"};
    QTest::newRow("serve --auth-max-lockout 0") << QStringList{"serve", "--auth-max-lockout", "0"};
    QTest::newRow("serve --auth-failures-per-minute 0") << QStringList{"serve", "--auth-failures-per-minute", "0"};
  }

  void usageErrorsExit2() {
    QFETCH(QStringList, args);
    RUN_EXPECT(r, 2, args);
    QVERIFY2(!r.err.trimmed().isEmpty(), qPrintable(describe(args, r)));
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(args, r)));
  }

  void helpAndVersionExit0_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("--help") << QStringList{"--help"} << "simulate";
    QTest::newRow("simulate --help") << QStringList{"simulate", "--help"} << "--scenario";
    QTest::newRow("--version") << QStringList{"--version"} << "kvscope-cli";
  }

  void helpAndVersionExit0() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    RUN_EXPECT(r, 0, args);
    QVERIFY2(QString::fromUtf8(r.out).contains(expected), qPrintable(describe(args, r)));
  }

  // The version and the git revision it was built from (12 hex digits, "-dirty" with uncommitted
  // changes), or "unknown" when built outside a git checkout.
  void versionNamesTheRevision() {
    RUN_EXPECT(r, 0, QStringList{"--version"});
    const QRegularExpression line(R"(^kvscope-cli \d+\.\d+\.\d+ \(git ([0-9a-f]{12}(-dirty)?|unknown)\)\n$)");
    QVERIFY2(line.match(QString::fromUtf8(r.out)).hasMatch(), qPrintable(describe({"--version"}, r)));
  }

  // Bad input: exit 1, nothing on stdout, one message on stderr naming what to fix.
  void badInputExit1_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("unknown scenario") << QStringList{"simulate", "--quiet", "--scenario", "nosuch"}
                                      << (QStringList{"nosuch"} + kBundled);
    QStringList knobNames{"nosuchknob",        "K", "sticky_bonus", "epsilon", "rho", "request_timeout_s",
                          "router_temperature"};
    QTest::newRow("unknown knob") << QStringList{"simulate", "--quiet", "--set", "nosuchknob=1"} << knobNames;
    QTest::newRow("K=-1") << QStringList{"simulate", "--quiet", "--set", "K=-1"}
                          << QStringList{"K", "-1", "[0, 10000]"};
    QTest::newRow("K=10001") << QStringList{"simulate", "--quiet", "--set", "K=10001"}
                             << QStringList{"K", "10001", "[0, 10000]"};
    QTest::newRow("rho=0") << QStringList{"simulate", "--quiet", "--set", "rho=0"} << QStringList{"rho", "[0.1, 1]"};
    QTest::newRow("K=abc") << QStringList{"simulate", "--quiet", "--set", "K=abc"} << QStringList{"K", "abc"};
    QTest::newRow("K=nan") << QStringList{"simulate", "--quiet", "--set", "K=nan"} << QStringList{"K", "[0, 10000]"};
    QTest::newRow("--set K") << QStringList{"simulate", "--quiet", "--set", "K"} << QStringList{"KNOB=VALUE", "'K'"};
    QTest::newRow("non-integer session_soft_cap") << QStringList{"simulate", "--quiet", "--set", "session_soft_cap=2.5"}
                                                  << QStringList{"session_soft_cap", "2.5"};
    // An unknown policy should name it and list the ones that exist, like an unknown scenario or knob.
    QTest::newRow("--policy nosuch") << QStringList{"simulate", "--quiet", "--duration", "10", "--policy", "nosuch"}
                                     << (QStringList{"nosuch"} + kPolicies);
    QTest::newRow("missing trace") << QStringList{"simulate", "--quiet", "--trace", "/nonexistent/kvscope/x.jsonl"}
                                   << QStringList{"/nonexistent/kvscope/x.jsonl"};
  }

  void badInputExit1() {
    QFETCH(QStringList, args);
    QFETCH(QStringList, mentions);
    RUN_EXPECT(r, 1, args);
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(args, r)));
    const QString err = errText(r);
    QVERIFY2(err.startsWith("kvscope-cli: error: "), qPrintable(describe(args, r)));
    QCOMPARE(err.trimmed().count('\n'), 0);  // one line
    for (const auto& m : mentions)
      QVERIFY2(err.contains(m), qPrintable(QString("stderr does not mention '%1'\n%2").arg(m, describe(args, r))));
  }

  // A scenario file with one mistake: the message names the file and the field.
  void badScenarioFileExit1_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("field");
    QTest::newRow("bad eviction") << QByteArray(R"({"name": "x", "eviction": "sometimes"})") << "eviction";
    QTest::newRow("wrong type") << QByteArray(R"({"name": "x", "duration_s": "long"})") << "duration_s";
    QTest::newRow("unknown field") << QByteArray(R"({"name": "x", "colour": "blue"})") << "colour";
    QTest::newRow("nested wrong type") << QByteArray(R"({"cluster": {"decode": "three"}})") << "cluster.decode";
    QTest::newRow("nested unknown field") << QByteArray(R"({"workload": {"sesions": 5}})") << "workload.sesions";
    QTest::newRow("out of range") << QByteArray(R"({"block_size": 0})") << "block_size";
    QTest::newRow("513 decode workers") << QByteArray(R"({"cluster": {"decode": 513}})") << "cluster.decode";
    QTest::newRow("65 prefill workers") << QByteArray(R"({"cluster": {"prefill": 65, "decode": 8}})")
                                        << "cluster.prefill";
    QTest::newRow("bad policy") << QByteArray(R"({"policy": "nosuch"})") << "policy";
    QTest::newRow("bad knob type") << QByteArray(R"({"knobs": {"K": "lots"}})") << "knobs.K";
    QTest::newRow("bad dispatch") << QByteArray(R"({"workload": {"dispatch": "asap"}})") << "workload.dispatch";
    QTest::newRow("replay is open or closed only")
        << QByteArray(R"({"workload": {"replay": "burst"}})") << "workload.replay";
    QTest::newRow("dispatch and replay") << QByteArray(R"({"workload": {"dispatch": "burst", "replay": "open"}})")
                                         << "workload.replay";
    QTest::newRow("inflight cap, open") << QByteArray(
                                               R"({"workload": {"dispatch": "open", "max_inflight_sessions": 3}})")
                                        << "workload.max_inflight_sessions";
    // A profile path leaving the scenario's folder is not read; a key said twice is not
    // silently resolved to its last value.
    QTest::newRow("profile traversal") << QByteArray(R"({"profile": "../../../../etc/passwd"})") << "profile";
    QTest::newRow("absolute profile") << QByteArray(R"({"profile": "/etc/passwd"})") << "profile";
    QTest::newRow("key given twice") << QByteArray(R"({"knobs": {"K": 0, "K": 200}})") << "K";
  }

  // The lab's replayer options: every dispatch mode, the session cap, the request timeout and the
  // wall deadline run, from the command line and from a scenario file.
  void dispatchOptions() {
    for (const char* mode : {"open", "closed", "tracets", "thinktime", "burst"}) {
      RUN_EXPECT(r, 0, kShort + QStringList{"--dispatch", mode, "--format", "json"});
      QVERIFY(r.out.contains("\"requests\""));
    }
    RUN_EXPECT(loop, 0, kShort + QStringList{"--loop", "open"});  // the older name
    RUN_EXPECT(all, 0,
               kShort + QStringList{"--dispatch", "tracets", "--max-inflight-sessions", "5", "--request-timeout", "600",
                                    "--wall-deadline", "120", "--format", "json"});
    QString error;
    const QJsonObject o = parseObject(all.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(o["sim_seconds"].toDouble(), 120.0);
    RUN_EXPECT(open_cap, 1, kShort + QStringList{"--dispatch", "open", "--max-inflight-sessions", "5"});
    QVERIFY2(open_cap.err.contains("--max-inflight-sessions"), open_cap.err.constData());
    RUN_EXPECT(bad, 2, kShort + QStringList{"--dispatch", "asap"});
    const QString path = tmp_.filePath("burst.json");
    QVERIFY(writeFile(path, R"({"name": "burst", "duration_s": 120, "workload": {"kind": "synthetic", "sessions": 10,
      "dispatch": "burst", "max_inflight_sessions": 4, "wall_deadline_s": 100}})"));
    RUN_EXPECT(file, 0, QStringList({"simulate", "--quiet", "--format", "json", "--scenario", path}));
    QCOMPARE(parseObject(file.out, &error)["sim_seconds"].toDouble(), 100.0);
  }

  // The largest cluster a scenario may ask for runs (the row above refuses one worker more).
  void productionSizeScenarioRuns() {
    const QString path = tmp_.filePath("production.json");
    QVERIFY(writeFile(path, R"({"name": "production", "cluster": {"prefill": 64, "decode": 512, "disaggregated": true},
      "duration_s": 20, "workload": {"kind": "synthetic", "sessions": 800, "start_window_s": 10}})"));
    RUN_EXPECT(r, 0, QStringList({"simulate", "--quiet", "--format", "json", "--scenario", path}));
    QString error;
    const QJsonObject o = parseObject(r.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    int decode = 0;
    for (const auto& w : o["workers"].toArray()) decode += w.toObject()["id"].toString().startsWith('D');
    QCOMPARE(decode, 512);
    QVERIFY(o["requests"].toObject()["total"].toInt() >= 800);
  }

  // A raw ESC in a scenario's name reaches the terminal as text, not as a command.
  void controlBytesInNamesAreEscaped() {
    const QString path = tmp_.filePath("esc.json");
    QVERIFY(writeFile(path, "{\"name\": \"esc\\u001b[2Jname\", \"duration_s\": 10}"));  // JSON's \u001b: an ESC
    RUN_EXPECT(r, 0, QStringList({"simulate", "--quiet", "--scenario", path}));
    QVERIFY2(!r.out.contains('\x1b'), r.out.constData());
    QVERIFY2(r.out.contains("scenario esc\\x1b[2Jname"), r.out.constData());
  }

  void badScenarioFileExit1() {
    QFETCH(QByteArray, content);
    QFETCH(QString, field);
    const QString path = tmp_.filePath(QStringLiteral("bad-%1.json").arg(QTest::currentDataTag()).replace(' ', '-'));
    QVERIFY(writeFile(path, content));
    RUN_EXPECT(r, 1, QStringList({"simulate", "--quiet", "--duration", "10", "--scenario", path}));
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(r_args, r)));
    const QString err = errText(r);
    QVERIFY2(err.contains(path), qPrintable(describe(r_args, r)));
    QVERIFY2(err.contains("'" + field + "'") || err.contains("\"" + field + "\""), qPrintable(describe(r_args, r)));
  }

  // Every first turn over max_context_tokens: no session has a request. Said, not run empty.
  void aWorkloadWithNoRequestIsAnError() {
    const QString path = tmp_.filePath("huge-first-turn.json");
    QVERIFY(writeFile(path, R"({"name": "huge", "workload": {"first_turn_tokens": {"fixed": 1e12}}})"));
    RUN_EXPECT(r, 1, QStringList({"simulate", "--quiet", "--duration", "10", "--scenario", path}));
    QVERIFY2(errText(r).contains("no session has a request") && errText(r).contains("max_context_tokens"),
             qPrintable(describe(r_args, r)));
  }

  void malformedScenarioJsonExit1() {
    const QString path = tmp_.filePath("broken.json");
    QVERIFY(writeFile(path, R"({"name": "x", "duration_s": )"));
    RUN_EXPECT(r, 1, QStringList({"simulate", "--quiet", "--scenario", path}));
    QVERIFY(r.out.isEmpty());
    QVERIFY2(errText(r).contains(path) && errText(r).contains("JSON"), qPrintable(describe(r_args, r)));
  }

  void malformedTraceLineExit1() {
    const QString path = tmp_.filePath("bad-line2.jsonl");
    RUN_EXPECT(r, 1, QStringList({"simulate", "--quiet", "--duration", "300", "--trace", path}));
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(r_args, r)));
    const QString err = errText(r);
    QVERIFY2(err.contains(path + ":2"), qPrintable(describe(r_args, r)));
    QVERIFY2(err.contains("input_length"), qPrintable(describe(r_args, r)));
  }

  void malformedTraceLineLenient() {
    const QString path = tmp_.filePath("bad-line2.jsonl");
    RUN_EXPECT(
        r, 0,
        QStringList({"simulate", "--quiet", "--duration", "300", "--trace", path, "--lenient", "--format", "json"}));
    QString error;
    const QJsonObject j = parseObject(r.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(j["skipped_records"].toInteger(-1), 1);
    QCOMPARE(j["requests"].toObject()["total"].toInteger(), 2);
  }

  // ---- --events -----------------------------------------------------------------------------------

  void eventsFileIsComplete() {
    const QString path = tmp_.filePath("events.jsonl");
    RUN_EXPECT(r, 0, kShort + QStringList({"--format", "json", "--events", path}));
    QVERIFY(!QFile::exists(path + ".partial"));
    QString error;
    const QJsonObject summary = parseObject(r.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));

    QFile f(path);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
    const QList<QByteArray> lines = f.readAll().split('\n');
    QVERIFY(lines.size() >= 3);
    QVERIFY2(lines.last().isEmpty(), "the file should end with a newline");
    QString firstKind, lastKind;
    qint64 prevSeq = -1, done = 0, count = 0;
    for (qsizetype i = 0; i + 1 < lines.size(); ++i) {
      QJsonParseError pe;
      const QJsonDocument doc = QJsonDocument::fromJson(lines[i], &pe);
      QVERIFY2(pe.error == QJsonParseError::NoError && doc.isObject(),
               qPrintable(QString("line %1: %2").arg(i + 1).arg(QString::fromUtf8(lines[i].left(200)))));
      const QJsonObject e = doc.object();
      QVERIFY2(e["seq"].isDouble() && e["kind"].isString() && e["t_us"].isDouble(),
               qPrintable(QString("line %1").arg(i + 1)));
      const qint64 seq = e["seq"].toInteger();
      if (prevSeq >= 0)
        QVERIFY2(seq == prevSeq + 1, qPrintable(QString("line %1: seq %2 after %3").arg(i + 1).arg(seq).arg(prevSeq)));
      prevSeq = seq;
      const QString kind = e["kind"].toString();
      if (i == 0) firstKind = kind;
      lastKind = kind;
      if (kind == "request_done") ++done;
      ++count;
    }
    QCOMPARE(firstKind, QStringLiteral("run_started"));
    QCOMPARE(lastKind, QStringLiteral("run_finished"));
    QCOMPARE(done, summary["requests"].toObject()["total"].toInteger());
    QVERIFY(count > done);
  }

  // A run that fails leaves neither the events file nor its .partial behind.
  void failedRunLeavesNoEventsFile_data() {
    QTest::addColumn<QStringList>("extra");
    QTest::newRow("knob out of range") << QStringList{"--set", "K=-1"};
    QTest::newRow("unknown policy") << QStringList{"--policy", "nosuch"};
    QTest::newRow("malformed trace") << QStringList{"--trace", "@TMP@/bad-line2.jsonl"};
    QTest::newRow("missing trace") << QStringList{"--trace", "@TMP@/nothing-here.jsonl"};
  }

  void failedRunLeavesNoEventsFile() {
    QFETCH(QStringList, extra);
    extra.replaceInStrings("@TMP@", tmp_.path());
    const QString path =
        tmp_.filePath(QStringLiteral("failed-%1.jsonl").arg(QTest::currentDataTag()).replace(' ', '-'));
    RUN_EXPECT(r, 1, kShort + QStringList({"--events", path}) + extra);
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(r_args, r)));
    QVERIFY2(!QFile::exists(path), qPrintable(path));
    QVERIFY2(!QFile::exists(path + ".partial"), qPrintable(path + ".partial"));
  }

  void eventsInMissingDirectoryExit1() {
    const QString path = tmp_.filePath("no/such/dir/events.jsonl");
    RUN_EXPECT(r, 1, kShort + QStringList({"--events", path}));
    QVERIFY(r.out.isEmpty());
    QVERIFY2(errText(r).contains(path), qPrintable(describe(r_args, r)));
  }

  // ---- listings -----------------------------------------------------------------------------------

  void scenariosListsTheBundledOnes() {
    RUN_EXPECT(r, 0, QStringList{"scenarios"});
    QStringList names;
    for (const auto& line : QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts)) {
      const QString name = line.section(' ', 0, 0, QString::SectionSkipEmpty);
      names << name;
      QVERIFY2(line.mid(name.size()).trimmed().size() > 0, qPrintable("no description: " + line));
    }
    QCOMPARE(names, kBundled);
  }

  void policiesJson() {
    RUN_EXPECT(r, 0, QStringList({"policies", "--format", "json"}));
    QString error;
    const QJsonObject j = parseObject(r.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QJsonArray policies = j["policies"].toArray();
    QStringList names;
    QJsonObject kvAwareK;
    for (const auto& v : policies) {
      const QJsonObject p = v.toObject();
      names << p["policy"].toString();
      QVERIFY(p["knobs"].isArray());
      for (const char* key : {"description", "origin", "tie_break"}) QVERIFY2(!p[key].toString().isEmpty(), key);
      QVERIFY(p["components"].isArray() && !p["components"].toArray().isEmpty());
      for (const auto& k : p["knobs"].toArray()) {
        const QJsonObject knob = k.toObject();
        for (const char* key : {"name", "unit", "min", "max", "default", "description"})
          QVERIFY2(knob.contains(key), key);
        QVERIFY(knob["min"].toDouble() <= knob["default"].toDouble() &&
                knob["default"].toDouble() <= knob["max"].toDouble());
        if (p["policy"].toString() == "kv-aware" && knob["name"].toString() == "K") kvAwareK = knob;
      }
    }
    QCOMPARE(names, kPolicies);  // the registry's order
    QCOMPARE(QSet<QString>(names.begin(), names.end()), QSet<QString>(kPolicies.begin(), kPolicies.end()));
    QVERIFY2(!kvAwareK.isEmpty(), "kv-aware does not list knob K");
    QCOMPARE(kvAwareK["min"].toDouble(-1), 0.0);
    QCOMPARE(kvAwareK["default"].toDouble(-1), 0.0);
    QVERIFY(j["shared_knobs"].isArray() && !j["shared_knobs"].toArray().isEmpty());
  }

  void policiesTableMentionsEveryPolicy() {
    RUN_EXPECT(r, 0, QStringList{"policies"});
    const QString out = QString::fromUtf8(r.out);
    for (const auto& p : kPolicies)
      QVERIFY2(out.contains(
                   QRegularExpression("^" + QRegularExpression::escape(p) + "$", QRegularExpression::MultilineOption)),
               qPrintable(p + " missing from\n" + out));
  }

  // ---- real data ----------------------------------------------------------------------------------

  void replaysTheRealAgenticTraces() {
    const QString dir = QString::fromStdString(testDataPath("traces/kv-cache-tester"));  // 13 real sessions
    RUN_EXPECT(r, 0,
               QStringList({"simulate", "--quiet", "--scenario", "e3-load-floor", "--duration", "600", "--trace", dir,
                            "--format", "json"}));
    QString error;
    const QJsonObject j = parseObject(r.out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QJsonObject req = j["requests"].toObject();
    QCOMPARE(j["skipped_records"].toInteger(-1), 0);
    QVERIFY2(req["total"].toInteger() > 0, qPrintable(QString::fromUtf8(r.out.left(600))));
    QCOMPARE(req["completed"].toInteger() + req["failed"].toInteger(), req["total"].toInteger());
    QVERIFY2(req["completed"].toInteger() > 0, qPrintable(QString("no request completed: %1 total, %2 failed")
                                                              .arg(req["total"].toInteger())
                                                              .arg(req["failed"].toInteger())));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
