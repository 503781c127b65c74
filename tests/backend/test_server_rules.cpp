// The server's rules as plain functions, no server needed: which hosts are loopback (a server on
// anything else needs a token or --insecure), the bearer token's comparison, and the author label a
// Control call's change carries.
#include <QtTest>

#include <string>

#include "backend/service/BearerToken.h"
#include "backend/service/ControlService.h"
#include "backend/service/ListenAddress.h"

using namespace kvscope;

class TestServerRules : public QObject {
  Q_OBJECT

 private slots:
  void loopbackHosts_data() {
    QTest::addColumn<QString>("host");
    QTest::addColumn<bool>("loopback");
    for (const char* h : {"127.0.0.1", "127.8.9.10", "localhost", "LocalHost", "::1", "::ffff:127.0.0.1"})
      QTest::newRow(qPrintable(QStringLiteral("'%1'").arg(h))) << h << true;
    for (const char* h : {"", "0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "127.0.0.1.example.com", "127.1",
                          "localhost.evil", "::ffff:10.0.0.1", "*"})
      QTest::newRow(qPrintable(QStringLiteral("'%1'").arg(h))) << h << false;
  }

  void loopbackHosts() {
    QFETCH(QString, host);
    QFETCH(bool, loopback);
    QCOMPARE(isLoopbackHost(host.toStdString()), loopback);
  }

  void bearerTokenComparison() {
    QVERIFY(constantTimeEquals("", ""));
    QVERIFY(constantTimeEquals("abc", "abc"));
    QVERIFY(!constantTimeEquals("abc", "abd"));
    QVERIFY(!constantTimeEquals("abc", "ab"));
    QVERIFY(!constantTimeEquals("ab", "abc"));
    QVERIFY(!constantTimeEquals(std::string_view("a\0", 2), "a"));  // a shorter input is not zero-padded into a match
    const BearerToken token("tok");
    QVERIFY(token.accepts("Bearer tok"));
    QVERIFY(token.accepts("BEARER tok"));
    QVERIFY(!token.accepts("Bearer tok "));
    QVERIFY(!token.accepts("Bearertok"));
    QVERIFY(!token.accepts("tok"));
    QVERIFY(!token.accepts(""));
  }

  void authorLabels() {
    QCOMPARE(controlAuthor("", "ipv4:127.0.0.1:5000"), std::string("grpc:127.0.0.1:5000"));
    QCOMPARE(controlAuthor("", "ipv6:[::1]:5000"), std::string("grpc:[::1]:5000"));
    QCOMPARE(controlAuthor("ops\n\x1b[31m", "ipv4:1.2.3.4:5"), std::string("ops??[31m"));
    const std::string accents(200, 'a');
    QCOMPARE(controlAuthor(accents + "\xc3\xa9", "").size(), std::size_t{128});
    QCOMPARE(controlAuthor(std::string(127, 'a') + "\xc3\xa9", "").size(), std::size_t{127});  // no half character
  }
};

QTEST_GUILESS_MAIN(TestServerRules)
#include "test_server_rules.moc"
