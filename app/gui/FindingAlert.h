#pragma once
// Tells an operator who is looking elsewhere that the diagnosis found something: the window title
// counts the findings that appeared while the window was not active ("(2) KVScope"), the window
// asks for attention (QApplication::alert: a taskbar flash), and where the desktop has a tray that
// shows messages, a notification names the finding. Activating the window clears the count.
#include <QObject>
#include <QString>

#include <QElapsedTimer>

#include <cstddef>
#include <cstdint>

class QMainWindow;
class QSystemTrayIcon;

namespace kvscope {

class TelemetryStore;

class FindingAlert : public QObject {
  Q_OBJECT
 public:
  FindingAlert(QMainWindow& window, QString title);
  // Called on every frame: alerts once per finding that was not there on the last call (a new run
  // starts from its own findings without alerting for them).
  void update(const TelemetryStore& store);
  int unseen() const { return unseen_; }
  const QString& lastMessage() const { return last_message_; }

 signals:
  void newFinding(const QString& message);  // every new finding, the window active or not

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void showTitle();

  QMainWindow& window_;
  QString title_;
  QSystemTrayIcon* tray_ = nullptr;
  std::size_t known_ = 0;
  std::uint64_t run_id_ = 0;
  int unseen_ = 0;
  QString last_message_;
  QElapsedTimer since_check_;  // the findings are computed at most once a second, as the panel does
};

}  // namespace kvscope
