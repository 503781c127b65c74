// `serve --notify-webhook URL` posts each finding as JSON to a real HTTP endpoint (cpp-httplib in
// the test): every finding of the run's summary was posted, each resolved one also as resolved,
// in the shape documented in FindingWebhook.h; a dead endpoint or one refusing the body costs the
// run nothing (a 4xx is not retried); a URL that is not http(s) is a usage error.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <mutex>
#include <thread>

#include <httplib.h>

#include "tests/support/CliRunner.h"
#include "tests/support/FakeSglangCluster.h"

using namespace kvscope::test;

namespace {
// A webhook endpoint on loopback: keeps each POST's body and answers `status`.
class WebhookEndpoint {
 public:
  explicit WebhookEndpoint(int status) {
    server_.Post("/hook", [this, status](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex_);
      bodies_.push_back(QByteArray::fromStdString(request.body));
      content_types_.push_back(QString::fromStdString(request.get_header_value("Content-Type")));
      response.status = status;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");  // listening from here: a POST waits for the loop
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~WebhookEndpoint() {
    server_.stop();
    thread_.join();
  }
  QString url() const { return QStringLiteral("http://127.0.0.1:%1/hook").arg(port_); }
  QList<QByteArray> bodies() const {
    std::lock_guard lock(mutex_);
    return bodies_;
  }
  QStringList contentTypes() const {
    std::lock_guard lock(mutex_);
    return content_types_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  QList<QByteArray> bodies_;
  QStringList content_types_;
};

QString keyOf(const QJsonObject& finding) {
  QString key = finding["mode"].toString();
  for (const auto& s : finding["subjects"].toArray()) key += '\n' + s.toString();
  return key;
}

const QStringList kServe{"serve",   "--scenario", "e2-cold-d",        "--duration", "600",
                         "--speed", "0",          "--exit-when-done", "--listen",   "127.0.0.1:0"};
}  // namespace

class TestCliWebhook : public QObject {
  Q_OBJECT
 private slots:
  void everyFindingOfTheRunIsPosted() {
    WebhookEndpoint endpoint(200);
    RUN_EXPECT(serve, 0, kServe + QStringList{"--notify-webhook", endpoint.url()});
    RUN_EXPECT(summary, 0, QStringList{"simulate", "--scenario", "e2-cold-d", "--duration", "600", "--format", "json"});
    const QJsonArray diagnosis = QJsonDocument::fromJson(summary.out).object()["diagnosis"].toArray();
    QVERIFY2(diagnosis.size() >= 2, summary.out.left(400).constData());  // e2-cold-d: B and C at least

    QSet<QString> found, resolved;
    for (const QByteArray& body : endpoint.bodies()) {
      QJsonParseError error{};
      const QJsonObject post = QJsonDocument::fromJson(body, &error).object();
      QVERIFY2(error.error == QJsonParseError::NoError, body.constData());
      QCOMPARE(post["source"].toString(), QStringLiteral("e2-cold-d"));
      QVERIFY2(post["stream_time_s"].toDouble() > 0, body.constData());
      const QJsonObject finding = post["finding"].toObject();
      for (const char* field : {"mode", "name", "subjects", "window_s", "evidence", "suggestion", "resolved"})
        QVERIFY2(finding.contains(field), field);
      // No window reaches past the moment it was posted.
      QVERIFY2(finding["window_s"].toArray()[1].toDouble() <= post["stream_time_s"].toDouble() + 1e-9,
               body.constData());
      QVERIFY2(post["text"].toString().contains(finding["mode"].toString() + " "), body.constData());
      if (post["kvscope"] == QStringLiteral("finding")) {
        // New, or holding again after its resolution was posted: never twice in a row.
        QVERIFY2(!found.contains(keyOf(finding)) || resolved.contains(keyOf(finding)), "posted twice as new: " + body);
        found << keyOf(finding);
        resolved.remove(keyOf(finding));
      } else {
        QCOMPARE(post["kvscope"].toString(), QStringLiteral("resolved"));
        QVERIFY2(found.contains(keyOf(finding)) && !resolved.contains(keyOf(finding)),
                 "resolved before it was posted, or twice: " + body);
        QVERIFY(finding["resolved"].toBool());
        resolved << keyOf(finding);
      }
    }
    for (const QString& type : endpoint.contentTypes()) QCOMPARE(type, QStringLiteral("application/json"));
    // The summary's findings (what the console and `simulate` list at the end) were all posted,
    // and the resolved ones as resolved.
    for (const auto& value : diagnosis) {
      const QJsonObject f = value.toObject();
      QVERIFY2(found.contains(keyOf(f)), qPrintable("not posted: " + keyOf(f)));
      if (f["resolved"].toBool()) QVERIFY2(resolved.contains(keyOf(f)), qPrintable("not posted resolved: " + keyOf(f)));
    }
    QVERIFY2(serve.out.contains("findings posted, 0 failed"), serve.out.constData());
  }

  // Nobody listening: the run serves and ends as it would, and says what it could not post.
  void aDeadEndpointCostsTheRunNothing() {
    const QString url = QStringLiteral("http://127.0.0.1:%1/hook").arg(closedPort());
    RUN_EXPECT(serve, 0, kServe + QStringList{"--notify-webhook", url});
    QVERIFY2(serve.out.contains("a finding was not posted"), serve.out.constData());
    QVERIFY2(serve.out.contains("0 findings posted"), serve.out.constData());
  }

  // A 4xx is the endpoint refusing the body: each is sent once, not retried.
  void aRefusedBodyIsNotRetried() {
    WebhookEndpoint endpoint(400);
    RUN_EXPECT(serve, 0, kServe + QStringList{"--notify-webhook", endpoint.url()});
    const QList<QByteArray> bodies = endpoint.bodies();
    QVERIFY(!bodies.isEmpty());
    QCOMPARE(QSet<QByteArray>(bodies.begin(), bodies.end()).size(), bodies.size());
    QVERIFY2(serve.out.contains("HTTP 400"), serve.out.constData());
  }

  void aUrlThatIsNotHttpIsAUsageError() {
    for (const QString& url : {QStringLiteral("ftp://host/hook"), QStringLiteral("http://"),
                               QStringLiteral("127.0.0.1:9/hook"), QStringLiteral("http://user@host/")}) {
      RUN_EXPECT(serve, 2, kServe + QStringList{"--notify-webhook", url});
      QVERIFY2(serve.err.contains("--notify-webhook: expected an http://"), serve.err.constData());
      QVERIFY2(serve.out.isEmpty(), serve.out.constData());  // refused before it listened
    }
  }
};

QTEST_MAIN(TestCliWebhook)
#include "test_cli_webhook.moc"
