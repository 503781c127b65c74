#pragma once
// A warning that does not block: a window-modal box opened with open(), deleted when closed, so the
// work that failed (a worker thread's result arriving in a queued call) returns at once and a
// caller waiting in an event loop - a test, a frame timer - goes on.
#include <QMessageBox>
#include <QString>
#include <QWidget>

namespace kvscope {

inline void showWarning(QWidget& window, const QString& title, const QString& text) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, &window);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

}  // namespace kvscope
