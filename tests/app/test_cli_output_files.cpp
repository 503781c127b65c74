// End to end with the real binary: every command that writes a file a user named
// writes a regular file only. A FIFO, a device node or a directory given as the target is refused
// (exit 1, the path named) and left as it was, never replaced or blocked on; a symlink is followed;
// `-` is standard output, and a failed write to standard output fails the command. The FIFO and the
// device node are made by the test in its temp dir, never under /dev.
#include <QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QFile>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <csignal>
#include <filesystem>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;
namespace fs = std::filesystem;

namespace {

// kvscope-cli with its standard output replaced in the child: `redirect` runs there, after fork and
// before exec. SIGPIPE is ignored so a closed pipe shows as a failed write (EPIPE). fork, not
// QProcess's child modifier: QProcess runs the modifier in a vfork child sharing the parent's
// memory, where the sanitised test's instrumented calls crashed the child before its exec.
Run runWithStdout(const QStringList& args, const std::function<void()>& redirect) {
  Run r;
  int err[2];
  if (::pipe(err) != 0) qFatal("pipe failed");
  const QByteArray program = QFile::encodeName(KVSCOPE_CLI);
  std::vector<QByteArray> texts{program};
  for (const QString& a : args) texts.push_back(a.toLocal8Bit());
  std::vector<char*> argv;
  argv.reserve(texts.size() + 1);
  for (QByteArray& t : texts) argv.push_back(t.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_IGN);
    ::dup2(err[1], STDERR_FILENO);
    ::close(err[0]);
    ::close(err[1]);
    redirect();
    ::execv(program.constData(), argv.data());
    ::_exit(127);
  }
  ::close(err[1]);
  char buf[4096];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) r.err.append(buf, n);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.crashed = !WIFEXITED(status);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return r;
}

struct Nodes {
  QString fifo, device, directory;
};

Nodes makeNodes(const QTemporaryDir& dir) {
  Nodes n{dir.filePath("out.fifo"), dir.filePath("out.dev"), dir.filePath("out.dir")};
  if (::mkfifo(QFile::encodeName(n.fifo).constData(), 0644) != 0) qFatal("mkfifo failed");
  // /dev/null's numbers, in the temp dir; only root may make it (the test then checks the others).
  if (::mknod(QFile::encodeName(n.device).constData(), S_IFCHR | 0666, makedev(1, 3)) != 0) n.device.clear();
  fs::create_directory(n.directory.toStdString());
  return n;
}

void expectUntouched(const Nodes& n) {
  QCOMPARE(fs::status(n.fifo.toStdString()).type(), fs::file_type::fifo);
  if (!n.device.isEmpty()) QCOMPARE(fs::status(n.device.toStdString()).type(), fs::file_type::character);
  QVERIFY(fs::is_directory(n.directory.toStdString()));
  QVERIFY(fs::is_empty(n.directory.toStdString()));
}

}  // namespace

class TestCliOutputFiles : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(rec_dir_.isValid());
    rec_ = rec_dir_.filePath("run.kvrec");
    RUN_EXPECT(sim, 0, QStringList{"simulate", "--duration", "120", "--quiet", "--record", rec_});
  }

  void exportRefusesNodesThatAreNotFiles() {
    QTemporaryDir dir;
    const Nodes n = makeNodes(dir);
    for (const QString& target : {n.fifo, n.device, n.directory}) {
      if (target.isEmpty()) continue;
      RUN_EXPECT(exp, 1, QStringList{"export", rec_, "--format", "csv", "-o", target});
      QVERIFY2(exp.err.contains(QFile::encodeName(target) + ": is "), exp.err.constData());
      QVERIFY2(exp.err.contains("not a regular file"), exp.err.constData());
    }
    expectUntouched(n);
    QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot).size(),
             n.device.isEmpty() ? 2 : 3);  // no temporary left beside them
  }

  void recordingsAndEventFilesRefuseThemBeforeAnyWork() {
    QTemporaryDir dir;
    const Nodes n = makeNodes(dir);
    for (const QString& target : {n.fifo, n.device, n.directory}) {
      if (target.isEmpty()) continue;
      RUN_EXPECT(rec, 1, QStringList{"simulate", "--duration", "30", "--quiet", "--record", target});
      QVERIFY2(rec.err.contains("--record " + QFile::encodeName(target) + ": is "), rec.err.constData());
      QVERIFY(rec.out.isEmpty());
      RUN_EXPECT(ev, 1, QStringList{"simulate", "--duration", "30", "--quiet", "--events", target});
      QVERIFY2(ev.err.contains("--events " + QFile::encodeName(target)), ev.err.constData());
      RUN_EXPECT(
          serve, 1,
          QStringList{"serve", "--listen", "127.0.0.1:0", "--duration", "5", "--exit-when-done", "--record", target});
      QVERIFY2(serve.err.contains(QFile::encodeName(target) + ": is "), serve.err.constData());
    }
    expectUntouched(n);
  }

  // `serve --record` into a folder that does not exist (or cannot be written) fails at start, not
  // after a whole session at exit; a second writer of a recording in use is refused with the pid of
  // the first instead of interleaving into one corrupt file.
  void serveRecordFailsAtStartAndHasOneWriter() {
    QTemporaryDir dir;
    const QString missing = dir.filePath("no/such/folder/run.kvrec");
    RUN_EXPECT(nowhere, 1, QStringList{"serve", "--listen", "127.0.0.1:0", "--record", missing});
    QVERIFY2(nowhere.err.contains("--record: cannot create recording"), nowhere.err.constData());

    const QString rec = dir.filePath("run.kvrec");
    QProcess first;
    first.setProcessChannelMode(QProcess::MergedChannels);
    first.start(KVSCOPE_CLI, {"serve", "--listen", "127.0.0.1:0", "--speed", "50", "--record", rec});
    QVERIFY(first.waitForStarted(kTimeoutMs));
    QByteArray out;
    for (int i = 0; i < 100 && !out.contains("recording to"); ++i) {
      first.waitForReadyRead(200);
      out += first.readAll();
    }
    QVERIFY2(out.contains("recording to"), out.constData());
    RUN_EXPECT(second, 1, QStringList{"serve", "--listen", "127.0.0.1:0", "--record", rec});
    QVERIFY2(second.err.contains("another writer has it open (pid " + QByteArray::number(first.processId()) + ")"),
             second.err.constData());
    ::kill(static_cast<pid_t>(first.processId()), SIGTERM);
    QVERIFY(first.waitForFinished(kTimeoutMs));
    QCOMPARE(first.exitCode(), 0);
    RUN_EXPECT(report, 0, QStringList{"report", rec});  // the first writer's recording is whole
  }

  // Ctrl+C or SIGTERM during a one-shot write leaves no hidden temporary: the events file of a long
  // simulation is stopped mid-write, and neither it nor its .partial is left; the process dies of
  // the signal (its parent sees how it ended).
  void anInterruptedWriteLeavesNoTemporary() {
    for (const int sig : {SIGTERM, SIGINT}) {
      QTemporaryDir dir;
      const QString events = dir.filePath("events.jsonl"), partial = dir.filePath(".events.jsonl.partial");
      QProcess sim;
      sim.start(KVSCOPE_CLI, {"simulate", "--scenario", "many-workers", "--quiet", "--events", events});
      QVERIFY(sim.waitForStarted(kTimeoutMs));
      // many-workers writes ~500 MB of events over ~10 s: signal it once the temporary has content.
      for (int i = 0; i < 20000 && QFileInfo(partial).size() == 0 && sim.state() == QProcess::Running; ++i)
        QTest::qWait(1);
      QVERIFY2(QFileInfo(partial).size() > 0, "the temporary never grew");
      ::kill(static_cast<pid_t>(sim.processId()), sig);
      QVERIFY(sim.waitForFinished(kTimeoutMs));
      QCOMPARE(sim.exitStatus(), QProcess::CrashExit);
      QVERIFY2(!QFileInfo::exists(partial), qPrintable(QString("signal %1 left the temporary").arg(sig)));
      QVERIFY(!QFileInfo::exists(events));
    }
  }

  // A temporary left by an import killed outright (SIGKILL cannot be caught) is taken over by the
  // next import of the same output, which says so; while another import still writes it (its lock
  // held), a second one is refused with the holder's pid before reading anything.
  void importTakesOverAStaleTemporaryAndHasOneWriter() {
    QTemporaryDir dir;
    const QString log = QString::fromStdString(testDataPath("import_run/d0.log"));
    const QString out = dir.filePath("run.kvrec"), partial = dir.filePath(".run.kvrec.partial");
    {
      QFile stale(partial);
      QVERIFY(stale.open(QIODevice::WriteOnly));
      stale.write("half of a recording from an import that was killed");
    }
    RUN_EXPECT(imp, 0, QStringList{"import", "--log", "D0=" + log, "-o", out});
    QVERIFY2(imp.err.contains("replacing " + QFile::encodeName(partial) + ", left by an import that was killed"),
             imp.err.constData());
    QVERIFY(!QFileInfo::exists(partial));
    RUN_EXPECT(report, 0, QStringList{"report", out});

    // Another writer: this test holds the fcntl lock an import would hold.
    const int fd = ::open(QFile::encodeName(partial).constData(), O_WRONLY | O_CREAT, 0644);
    QVERIFY(fd >= 0);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    QVERIFY(::fcntl(fd, F_SETLK, &lock) == 0);
    RUN_EXPECT(second, 1, QStringList{"import", "--log", "D0=" + log, "-o", out});
    QVERIFY2(second.err.contains("another writer has it open (pid " + QByteArray::number(::getpid()) + ")"),
             second.err.constData());
    QVERIFY2(!second.err.contains("replacing"), second.err.constData());
    QVERIFY(QFileInfo::exists(partial));  // the holder's file, left alone
    ::close(fd);
  }

  // The console's exports go through the same check: `kvscope --screenshot` onto a FIFO or a
  // device node is refused with the path named, the node left as it was.
  void theConsoleExportRefusesThemToo() {
    QTemporaryDir dir;
    const Nodes n = makeNodes(dir);
    for (const QString& target : {n.fifo, n.device}) {
      if (target.isEmpty()) continue;
      QProcess gui;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("QT_QPA_PLATFORM", "offscreen");
      gui.setProcessEnvironment(env);
      gui.start(KVSCOPE_GUI, {"--scenario", "e3-load-floor", "--screenshot", target, "--run-for", "5"});
      QVERIFY(gui.waitForStarted(kTimeoutMs));
      QVERIFY2(gui.waitForFinished(kTimeoutMs), "the console did not finish");
      const QByteArray err = gui.readAllStandardError();
      QCOMPARE(gui.exitStatus(), QProcess::NormalExit);
      QVERIFY2(gui.exitCode() == 1, err.constData());
      QVERIFY2(err.contains(QFile::encodeName(target) + ": is "), err.constData());
    }
    expectUntouched(n);
  }

  void aSymlinkIsFollowedAndKept() {
    QTemporaryDir dir;
    const QString real = dir.filePath("real.jsonl"), link = dir.filePath("link.jsonl");
    QVERIFY(QFile::link("real.jsonl", link));
    RUN_EXPECT(exp, 0, QStringList{"export", rec_, "--format", "jsonl", "-o", link});
    QVERIFY(QFileInfo(link).isSymLink());
    QVERIFY(QFileInfo(real).size() > 1000);
    const QString rec_link = dir.filePath("rec-link.kvrec");
    QVERIFY(QFile::link("real.kvrec", rec_link));
    RUN_EXPECT(sim, 0, QStringList{"simulate", "--duration", "30", "--quiet", "--record", rec_link});
    QVERIFY(QFileInfo(rec_link).isSymLink());
    RUN_EXPECT(rep, 0, QStringList{"report", dir.filePath("real.kvrec")});
  }

  void dashIsStandardOutput() {
    RUN_EXPECT(exp, 0, QStringList{"export", rec_, "--format", "csv", "-o", "-"});
    QVERIFY(exp.out.startsWith("seq,time_s,kind,"));
    QVERIFY(!QFileInfo::exists("-"));
  }

  // `simulate > closed pipe` (and `> /dev/full`, opened only as the redirection's target) exits 1.
  void aFailedWriteToStandardOutputFailsTheCommand() {
    const QStringList sim{"simulate", "--duration", "30", "--quiet"};
    const Run closed = runWithStdout(sim, [] {
      int p[2];
      if (::pipe(p) == 0) {
        ::close(p[0]);
        ::dup2(p[1], STDOUT_FILENO);
      }
    });
    QVERIFY2(!closed.crashed && closed.code == 1, qPrintable(describe(sim, closed)));
    QVERIFY2(closed.err.contains("cannot write to standard output"), closed.err.constData());
    const QStringList exp{"export", rec_, "--format", "csv", "-o", "-"};
    const Run closed_export = runWithStdout(exp, [] {
      int p[2];
      if (::pipe(p) == 0) {
        ::close(p[0]);
        ::dup2(p[1], STDOUT_FILENO);
      }
    });
    QVERIFY2(!closed_export.crashed && closed_export.code == 1, qPrintable(describe(exp, closed_export)));
    if (QFileInfo::exists("/dev/full")) {
      const Run full = runWithStdout(sim, [] {
        const int fd = ::open("/dev/full", O_WRONLY);
        if (fd >= 0) ::dup2(fd, STDOUT_FILENO);
      });
      QVERIFY2(!full.crashed && full.code == 1, qPrintable(describe(sim, full)));
      QVERIFY2(full.err.contains("cannot write to standard output"), full.err.constData());
    }
  }

 private:
  QTemporaryDir rec_dir_;
  QString rec_;
};

QTEST_GUILESS_MAIN(TestCliOutputFiles)
#include "test_cli_output_files.moc"
