#pragma once
// Runs the real kvscope-cli binary (KVSCOPE_CLI) with QProcess for the app-level tests.
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QProcess>
#include <QString>
#include <QStringList>

#include "tests/support/BuildTree.h"

namespace kvscope::test {

constexpr int kTimeoutMs = 120000;

struct Run {
  int code = -1;
  QByteArray out;
  QByteArray err;
  bool crashed = false;
  bool timedOut = false;
};

inline Run runCli(const QStringList& args) {
  QProcess p;
  p.setProgram(KVSCOPE_CLI);
  p.setArguments(args);
  p.start();
  Run r;
  if (!p.waitForStarted(kTimeoutMs)) {
    r.crashed = true;
    r.err = ("could not start " + KVSCOPE_CLI).toUtf8();
    return r;
  }
  p.closeWriteChannel();
  if (!p.waitForFinished(kTimeoutMs)) {
    r.timedOut = true;
    p.kill();
    p.waitForFinished();
  }
  r.crashed = p.exitStatus() != QProcess::NormalExit;
  r.code = p.exitCode();
  r.out = p.readAllStandardOutput();
  r.err = p.readAllStandardError();
  return r;
}

// The JSON objects of a command's JSON-lines output (`logs`, `kv-events`, `scrape`).
inline QList<QJsonObject> jsonLines(const QByteArray& out) {
  QList<QJsonObject> all;
  for (const QByteArray& line : out.split('\n'))
    if (!line.isEmpty()) all << QJsonDocument::fromJson(line).object();
  return all;
}

inline QString describe(const QStringList& args, const Run& r) {
  return "kvscope-cli " + args.join(' ') + "\n  exit " + QString::number(r.code) + (r.crashed ? " (crashed)" : "") +
         (r.timedOut ? " (timed out)" : "") + "\n  stdout: " + QString::fromUtf8(r.out.left(600)) +
         "\n  stderr: " + QString::fromUtf8(r.err.left(600));
}

// Runs kvscope-cli with the arguments given after `exit_code` (any QStringList expression), requires a
// normal exit with `exit_code`, and leaves the run in `var` (and its arguments in `var##_args`).
#define RUN_EXPECT(var, exit_code, ...)                                           \
  const QStringList var##_args = __VA_ARGS__;                                     \
  const Run var = runCli(var##_args);                                             \
  QVERIFY2(!var.crashed && !var.timedOut, qPrintable(describe(var##_args, var))); \
  QVERIFY2(var.code == (exit_code), qPrintable(describe(var##_args, var)))

}  // namespace kvscope::test
