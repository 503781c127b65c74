#pragma once
// tests/backend/kv_event_publisher.py as a child process: a ZMQ KV event publisher that behaves on
// the wire as vLLM's and SGLang's, driven one command at a time (see the script).
#include <QProcess>
#include <QString>
#include <filesystem>
#include <string>

#include "tests/support/BuildTree.h"

namespace kvscope::test {

class Publisher {
 public:
  // On free ports, or on those of a publisher this one restarts (`ports`: "PUB REPLAY").
  explicit Publisher(const QStringList& ports = {}) {
    const auto tests = std::filesystem::canonical(testDataDir()).parent_path();
    process_.start("/usr/bin/python3",
                   QStringList{QString::fromStdString((tests / "backend" / "kv_event_publisher.py").string())} + ports);
    process_.waitForStarted(10000);
    process_.waitForReadyRead(10000);
    const QStringList words = QString::fromUtf8(process_.readLine()).split(' ');
    if (words.size() == 4) {
      pub = words[1].toStdString();
      replay = words[3].trimmed().toStdString();
    }
  }
  ~Publisher() {
    process_.kill();
    process_.waitForFinished();
  }
  // One command; waits for its "ok".
  bool send(const QString& line) {
    process_.write((line + "\n").toUtf8());
    while (process_.canReadLine() || process_.waitForReadyRead(10000))
      if (process_.readLine().trimmed() == "ok") return true;
    return false;
  }
  QString fixture(const char* name) const {
    return QString::fromStdString(testDataPath(std::string("kv_events/") + name));
  }
  void quit() {
    process_.write("quit\n");
    process_.waitForFinished(10000);
  }
  // The ports a restarted publisher binds again.
  QStringList ports() const {
    return {QString::fromStdString(pub.substr(pub.rfind(':') + 1)),
            QString::fromStdString(replay.substr(replay.rfind(':') + 1))};
  }
  std::string pub, replay;

 private:
  QProcess process_;
};

}  // namespace kvscope::test
