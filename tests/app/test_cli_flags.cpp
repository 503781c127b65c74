// Every flag `--help` documents is run by some test: a flag's storage once died before CLI11
// wrote into it (`logs --format`), and only running the flag showed it. The flags no other test
// needed are run here once each.
#include <QtTest>

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <filesystem>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

class TestCliFlags : public QObject {
  Q_OBJECT
 private slots:
  // The wrong-token throttle's limits are taken (the throttle itself: test_call_authorization).
  void serveTakesTheThrottleLimits() {
    RUN_EXPECT(
        r, 0,
        QStringList{"serve", "--listen", "127.0.0.1:0", "--duration", "5", "--exit-when-done", "--auth-free-failures",
                    "3", "--auth-max-lockout", "10", "--auth-failures-per-minute", "100"});
    Q_UNUSED(r);
  }

  // Every flag `--help` documents is run by some test (a flag's storage once died before CLI11
  // wrote into it, and only running the flag showed it): a flag no test names fails here.
  void everyDocumentedFlagIsRunByATest() {
    // Every test source, this one included (the check below names no flag of its own).
    QString corpus;
    const auto tests_dir = std::filesystem::canonical(testDataDir()).parent_path();
    for (const auto& e : std::filesystem::recursive_directory_iterator(tests_dir)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".py" && ext != ".sh")) continue;
      QFile f(QString::fromStdString(e.path().string()));
      if (f.open(QIODevice::ReadOnly)) corpus += QString::fromUtf8(f.readAll());
    }
    const QRegularExpression option(R"(^\s+(?:(-\w),)?(--[a-z0-9-]+))", QRegularExpression::MultilineOption);
    const QRegularExpression subcommand(R"(^  ([a-z]+)\s{2,})", QRegularExpression::MultilineOption);
    QStringList missing;
    auto subcommandsOf = [&](const QStringList& path) {
      const Run h = runCli(path + QStringList{"--help"});
      QStringList out;
      if (h.code != 0) missing << path.join(' ') + " --help failed";
      const QString text = QString::fromUtf8(h.out);
      const qsizetype at = text.indexOf("Subcommands:");
      if (at < 0) return out;
      for (auto m = subcommand.globalMatch(text.mid(at)); m.hasNext();) out << m.next().captured(1);
      return out;
    };
    auto check = [&](const QStringList& path) {
      const Run h = runCli(path + QStringList{"--help"});
      if (h.code != 0) missing << path.join(' ') + " --help failed";
      QString text = QString::fromUtf8(h.out);
      text = text.left(text.indexOf("Subcommands:"));
      for (auto m = option.globalMatch(text); m.hasNext();) {
        const auto match = m.next();
        const QString name = match.captured(2), alias = match.captured(1);
        if (name == "--help" || name == "--version") continue;
        const bool named = corpus.contains('"' + name + '"') || corpus.contains('"' + name + '=') ||
                           corpus.contains('\'' + name + '\'') || corpus.contains(' ' + name + ' ') ||
                           (!alias.isEmpty() && corpus.contains('"' + alias + '"'));
        if (!named) missing << path.join(' ') + " " + name;
      }
    };
    for (const QString& sub : subcommandsOf({})) {
      check({sub});
      for (const QString& inner : subcommandsOf({sub})) check({sub, inner});
    }
    QVERIFY2(missing.isEmpty(), qPrintable("documented flags no test runs: " + missing.join(", ")));
  }

  // The flags the other tests did not need, each run once (the ones that need a server against an
  // address nobody serves: they are parsed and used, and the command fails as it should).
  void flagsRunOnce_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    const QString sessions = QString::fromStdString(testDataPath("traces/kv-cache-tester"));
    QTest::newRow("simulate --start-window --time-scale")
        << QStringList{"simulate", "--quiet",      "--trace", sessions,     "--start-window",
                       "60",       "--time-scale", "0.5",     "--duration", "120"}
        << 0;
    QTest::newRow("serve --start-window --time-scale")
        << QStringList{"serve", "--listen",        "127.0.0.1:0", "--trace",    sessions, "--start-window",
                       "60",    "--time-scale",    "0.5",         "--duration", "30",     "--speed",
                       "100",   "--exit-when-done"}
        << 0;
    QTest::newRow("serve --tls-cert --tls-key (missing files)")
        << QStringList{"serve",     "--listen",           "127.0.0.1:0", "--tls-cert", "/nonexistent/c.pem",
                       "--tls-key", "/nonexistent/k.pem", "--duration",  "1",          "--exit-when-done"}
        << 1;
    QTest::newRow("tail --from-seq --kinds --limit (no server)")
        << QStringList{"tail", "127.0.0.1:1", "--from-seq", "5", "--kinds", "route,eviction", "--limit", "3"} << 1;
    QTest::newRow("mark --who --timeout (no server)")
        << QStringList{"mark", "127.0.0.1:1", "--start", "k200", "--who", "ci", "--timeout", "1"} << 1;
    QTest::newRow("import --client-log --snapshot-interval --year (missing client log)")
        << QStringList{"import",
                       "--log",
                       "D0=" + QString::fromStdString(testDataPath("import_run/d0.log")),
                       "--client-log",
                       "/nonexistent/client.log",
                       "--snapshot-interval",
                       "5",
                       "--year",
                       "2026",
                       "--output",
                       "/nonexistent/x.kvrec"}
        << 1;
    QTest::newRow("serve --max-subscribers-per-host --stalled-subscriber")
        << QStringList{"serve",       "--listen",
                       "127.0.0.1:0", "--max-subscribers-per-host",
                       "8",           "--stalled-subscriber",
                       "5",           "--duration",
                       "5",           "--exit-when-done"}
        << 0;
    QTest::newRow("simulate --max-inflight-requests")
        << QStringList{"simulate", "--quiet",    "--scenario", "lab-e-burst", "--max-inflight-requests",
                       "8",        "--duration", "60"}
        << 0;
    QTest::newRow("serve --max-inflight-requests") << QStringList{"serve",       "--listen",
                                                                  "127.0.0.1:0", "--scenario",
                                                                  "lab-e-burst", "--max-inflight-requests",
                                                                  "8",           "--duration",
                                                                  "5",           "--exit-when-done"}
                                                   << 0;
    // The router alone runs until a signal: a refused listen address ends it after the flags are read.
    QTest::newRow("serve --router --block-size")
        << QStringList{"serve", "--router", "D0,D1", "--block-size", "16", "--listen", "0.0.0.0:0"} << 2;
    QTest::newRow("calibrate profile --name")
        << QStringList{"calibrate",   "profile", QString::fromStdString(testDataPath("import_run/d0.log")),
                       "--name",      "labx",    "-o",
                       "@TMP@/p.json"}
        << 0;
    const QString target = QString::fromStdString(
        (testExeDir().parent_path() / "share/kvscope/calibration/lab-glm-trace.target.json").string());
    QTest::newRow("calibrate fit --algorithm --name --no-sensitivity") << QStringList{"calibrate",
                                                                                      "fit",
                                                                                      "--scenario",
                                                                                      "lab-8c",
                                                                                      "--target",
                                                                                      target,
                                                                                      "--fit",
                                                                                      "output_scale=0.5:2",
                                                                                      "--seeds",
                                                                                      "1",
                                                                                      "--duration",
                                                                                      "120",
                                                                                      "--evaluations",
                                                                                      "3",
                                                                                      "--algorithm",
                                                                                      "sbplx",
                                                                                      "--name",
                                                                                      "lab-8c-short",
                                                                                      "--no-sensitivity",
                                                                                      "--quiet",
                                                                                      "-o",
                                                                                      "@TMP@/f.json"}
                                                                       << 0;
  }
  void flagsRunOnce() {
    QTemporaryDir dir;
    QFETCH(QStringList, args);
    args.replaceInStrings("@TMP@", dir.path());
    QFETCH(int, code);
    RUN_EXPECT(r, code, args);
    Q_UNUSED(r);
  }
};

QTEST_GUILESS_MAIN(TestCliFlags)
#include "test_cli_flags.moc"
