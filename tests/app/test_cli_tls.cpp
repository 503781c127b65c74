// `tail` and `mark` reach a `serve --tls-cert --tls-key` over TLS (--tls-ca: a self-signed server's
// own certificate) and fail to reach it in clear; the console's --tls and --tls-ca go with --connect.
#include <QtTest>

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "tests/support/CliRunner.h"

using namespace kvscope::test;

class TestCliTls : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString openssl = QStandardPaths::findExecutable("openssl");
    QVERIFY2(!openssl.isEmpty(), "openssl is missing (scripts/deps.sh installs it): it makes the test certificate");
    cert_ = dir_.filePath("cert.pem");
    const QString key = dir_.filePath("key.pem");
    QProcess p;
    p.start(openssl, {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                      "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert_});
    QVERIFY(p.waitForFinished(60000) && p.exitCode() == 0);
    serve_.setProcessChannelMode(QProcess::SeparateChannels);
    serve_.start(KVSCOPE_CLI, {"serve", "--scenario", "e2-cold-d", "--listen", "127.0.0.1:0", "--tls-cert", cert_,
                               "--tls-key", key, "--speed", "20", "--duration", "600"});
    QVERIFY(serve_.waitForStarted(10000));
    QByteArray out;
    QElapsedTimer started;
    started.start();
    while (!out.contains('\n') && started.elapsed() < 60000) {
      serve_.waitForReadyRead(500);
      out += serve_.readAllStandardOutput();
    }
    const auto m = QRegularExpression(R"(listening on (\S+))").match(QString::fromUtf8(out));
    QVERIFY2(m.hasMatch(), out.constData());
    address_ = m.captured(1);
  }

  void cleanupTestCase() {
    serve_.terminate();
    if (!serve_.waitForFinished(30000)) serve_.kill();
  }

  void tailOverTlsWithTheServersCertificate() {
    RUN_EXPECT(r, 0, QStringList{"tail", address_, "--tls-ca", cert_, "--limit", "3"});
    const QList<QJsonObject> events = jsonLines(r.out);
    QCOMPARE(events.size(), 3);
    QVERIFY2(events[0].contains("kind"), r.out.constData());
  }

  // In clear against a TLS server, or TLS trusting only the system's roots: no stream, exit 1.
  void aClearOrUntrustedCallIsRefused() {
    RUN_EXPECT(clear, 1, QStringList{"tail", address_, "--limit", "1"});
    QVERIFY2(clear.out.isEmpty(), clear.out.constData());
    RUN_EXPECT(untrusted, 1, QStringList{"tail", address_, "--tls", "--limit", "1"});
    QVERIFY2(untrusted.out.isEmpty(), untrusted.out.constData());
  }

  // mark over TLS reaches the server, which refuses a mark on a simulated run with its reason
  // (not UNAVAILABLE, gRPC code 14, as the same call in clear gets).
  void markOverTlsIsAnsweredByTheServer() {
    RUN_EXPECT(tls, 1, QStringList{"mark", address_, "--tls-ca", cert_, "--start", "k200", "--timeout", "20"});
    QVERIFY2(!tls.err.contains("gRPC code 14"), qPrintable(describe(tls_args, tls)));
    QVERIFY2(tls.err.contains("gRPC code"), qPrintable(describe(tls_args, tls)));
    RUN_EXPECT(clear, 1, QStringList{"mark", address_, "--start", "k200", "--timeout", "5"});
    QVERIFY2(clear.err.contains("gRPC code 14"), qPrintable(describe(clear_args, clear)));
  }

  void aMissingRootCertificateIsAUsageError() {
    RUN_EXPECT(r, 2, QStringList{"tail", address_, "--tls-ca", dir_.filePath("none.pem")});
    QVERIFY2(r.err.contains("--tls-ca"), r.err.constData());
    // A file that is no certificate is said before any call: text, and a binary that holds the
    // armour's words (this CLI's own, which looks for them) but not as PEM lines.
    const QString text = dir_.filePath("notes.txt");
    QFile notes(text);
    QVERIFY(notes.open(QIODevice::WriteOnly) && notes.write("not a certificate\n") > 0);
    notes.close();
    for (const QString& file : {text, QString(KVSCOPE_CLI)}) {
      RUN_EXPECT(bad, 1, QStringList{"mark", address_, "--tls-ca", file, "--start", "a"});
      QVERIFY2(bad.err.contains("no PEM certificate"), bad.err.constData());
    }
  }

  void theConsolesTlsFlagsGoWithConnect() {
    QProcess gui;
    gui.start(KVSCOPE_GUI, {"--tls-ca", cert_, "--scenario", "e2-cold-d"});
    QVERIFY(gui.waitForFinished(60000));
    QCOMPARE(gui.exitCode(), 2);
    QVERIFY2(gui.readAllStandardError().contains("--tls and --tls-ca go with --connect"), "usage error expected");
  }

 private:
  QTemporaryDir dir_;
  QString cert_, address_;
  QProcess serve_;
};

QTEST_MAIN(TestCliTls)
#include "test_cli_tls.moc"
