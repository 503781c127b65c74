// End to end: `serve --live` on a cluster whose worker writes its log to a FIFO
// nobody writes and whose /metrics sends its headers a byte at a time stops on SIGTERM within a
// stated time (kvscope-cli's scrape deadline plus teardown: well under 10 s), exit 0, with that
// worker reported unreachable and the FIFO named instead of waited on.
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/support/BuildTree.h"

namespace {

// Accepts any number of connections and sends each the start of an HTTP answer, one byte every
// 100 ms per connection, never finishing it.
class HeaderDripper {
 public:
  HeaderDripper() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listener_, 16);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~HeaderDripper() {
    stop_ = true;
    thread_.join();
    for (const auto& [fd, sent] : clients_) ::close(fd);
    ::close(listener_);
  }
  int port() const { return port_; }

 private:
  void run() {
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Drip: " + std::string(100000, 'x');
    while (!stop_) {
      for (int fd; (fd = ::accept(listener_, nullptr, nullptr)) >= 0;) clients_.emplace_back(fd, 0);
      for (auto& [fd, sent] : clients_)
        if (sent < head.size() && ::send(fd, head.data() + sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) ++sent;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::pair<int, std::size_t>> clients_;
  std::thread thread_;
};

}  // namespace

class TestCliLiveShutdown : public QObject {
  Q_OBJECT
 private slots:
  void sigtermStopsAServeWhoseClusterHangs() {
    QTemporaryDir dir;
    HeaderDripper dripper;
    QCOMPARE(::mkfifo(QFile::encodeName(dir.filePath("d0.log")).constData(), 0644), 0);
    QFile cluster(dir.filePath("cluster.yaml"));
    QVERIFY(cluster.open(QIODevice::WriteOnly));
    cluster.write(
        QStringLiteral("name: hanging\nscrape_interval_s: 0.2\nworkers:\n"
                       "  - id: D0\n    role: decode\n    metrics: http://127.0.0.1:%1/metrics\n    logs: d0.log\n")
            .arg(dripper.port())
            .toUtf8());
    cluster.close();

    QProcess serve;
    serve.setProcessChannelMode(QProcess::MergedChannels);
    serve.start(KVSCOPE_CLI, {"serve", "--live", cluster.fileName(), "--listen", "127.0.0.1:0"});
    QVERIFY(serve.waitForStarted(10000));
    QByteArray out;
    QElapsedTimer started;
    started.start();
    while (!out.contains("listening on") && started.elapsed() < 15000) {
      serve.waitForReadyRead(500);
      out += serve.readAll();
    }
    QVERIFY2(out.contains("listening on"), out.constData());
    // Long enough for a scrape to hit its deadline and the tailer to look at the FIFO.
    std::this_thread::sleep_for(std::chrono::seconds(4));
    QElapsedTimer stopping;
    stopping.start();
    ::kill(static_cast<pid_t>(serve.processId()), SIGTERM);
    const bool stopped = serve.waitForFinished(10000);
    const qint64 took = stopping.elapsed();
    if (!stopped) {
      serve.kill();
      serve.waitForFinished();
    }
    out += serve.readAll();
    QVERIFY2(stopped, qPrintable("no exit within 10 s of SIGTERM:\n" + QString::fromUtf8(out)));
    QVERIFY2(took < 8000, qPrintable(QString::number(took) + " ms\n" + QString::fromUtf8(out)));
    QCOMPARE(serve.exitStatus(), QProcess::NormalExit);
    QVERIFY2(serve.exitCode() == 0, out.constData());
    QVERIFY2(out.contains("no complete answer within"), out.constData());
  }
};

QTEST_GUILESS_MAIN(TestCliLiveShutdown)
#include "test_cli_live_shutdown.moc"
