#include "app/gui/FindingAlert.h"

#include <QApplication>
#include <QEvent>
#include <QMainWindow>
#include <QStyle>
#include <QSystemTrayIcon>

#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

namespace {
constexpr qint64 kCheckIntervalMs = 1000;
}  // namespace

FindingAlert::FindingAlert(QMainWindow& window, QString title)
    : QObject(&window), window_(window), title_(std::move(title)) {
  window_.installEventFilter(this);
  if (QSystemTrayIcon::isSystemTrayAvailable() && QSystemTrayIcon::supportsMessages()) {
    tray_ = new QSystemTrayIcon(window_.style()->standardIcon(QStyle::SP_MessageBoxWarning), this);
    tray_->setToolTip(title_);
  }
}

void FindingAlert::update(const TelemetryStore& store) {
  if (store.runId() != run_id_) {  // a new run: its findings so far are what it opens with
    run_id_ = store.runId();
    known_ = store.findings().size();
    since_check_.start();
    return;
  }
  if (since_check_.isValid() && since_check_.elapsed() < kCheckIntervalMs) return;
  since_check_.start();
  const std::vector<Finding> findings = store.findings();
  if (findings.size() <= known_) {  // none new (or a seek back in a replay: fewer so far)
    known_ = findings.size();
    return;
  }
  const Finding& newest = findings.back();
  last_message_ = tr("%1 - %2 (%3) from %4 s")
                      .arg(QString::fromStdString(newest.mode), QString::fromStdString(newest.name),
                           QString::fromStdString(newest.subjectsText(3)))
                      .arg(newest.window_start_s, 0, 'f', 0);
  if (!window_.isActiveWindow()) {
    unseen_ += static_cast<int>(findings.size() - known_);
    showTitle();
    QApplication::alert(&window_);
    if (tray_) {
      tray_->show();
      tray_->showMessage(tr("KVScope: new finding"), last_message_, QSystemTrayIcon::Warning);
    }
  }
  known_ = findings.size();
  emit newFinding(last_message_);
}

bool FindingAlert::eventFilter(QObject* watched, QEvent* event) {
  if (watched == &window_ && event->type() == QEvent::WindowActivate && unseen_ > 0) {
    unseen_ = 0;
    showTitle();
  }
  return QObject::eventFilter(watched, event);
}

void FindingAlert::showTitle() {
  window_.setWindowTitle(unseen_ > 0 ? QStringLiteral("(%1) %2").arg(unseen_).arg(title_) : title_);
}

}  // namespace kvscope
