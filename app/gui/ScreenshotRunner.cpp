#include "gui/ScreenshotRunner.h"

#include <QApplication>
#include <QTimer>

#include <cstdio>

#include "gui/ExportActions.h"
#include "gui/MainWindow.h"
#include "gui/PanelDocks.h"
#include "gui/RunSession.h"

namespace kvscope {

ScreenshotRunner::ScreenshotRunner(MainWindow& window, QString path, double run_for_s, int wall_timeout_s)
    : QObject(&window), window_(window), path_(std::move(path)), target_(secondsToTime(run_for_s)),
      wall_timeout_s_(wall_timeout_s) {}

void ScreenshotRunner::start() {
  connect(&window_.session(), &RunSession::frame, this, &ScreenshotRunner::onFrame);
  QTimer::singleShot(wall_timeout_s_ * 1000, this, [this] {
    finish(1, QStringLiteral("kvscope: the run did not reach %1 s within %2 s of wall time")
                  .arg(timeToSeconds(target_))
                  .arg(wall_timeout_s_));
  });
}

void ScreenshotRunner::onFrame() {
  if (done_) return;
  Source* source = window_.session().source();
  const TelemetryStore& store = window_.session().store();
  const bool reached = store.now() >= target_ || store.finished();
  if (!source || !reached) return;
  done_ = true;  // drainNow() below emits frame() again
  if (source->capabilities().pause && !store.finished()) source->pause();
  // Everything the source produced before it stood still, then every panel, visible or not.
  window_.session().drainNow();
  window_.docks().refresh(store, true);
  QApplication::processEvents();
  QString error;
  ExportActions exporter(window_, window_.session());
  done_ = false;
  if (!exporter.saveWindowPng(path_, &error)) return finish(1, QStringLiteral("kvscope: ") + error);
  finish(0, QStringLiteral("kvscope: saved %1 at simulated %2 s").arg(path_).arg(timeToSeconds(store.now()), 0, 'f', 1));
}

void ScreenshotRunner::finish(int code, const QString& message) {
  if (done_) return;
  done_ = true;
  std::fprintf(code == 0 ? stdout : stderr, "%s\n", message.toLocal8Bit().constData());
  std::fflush(nullptr);
  window_.session().close();
  QApplication::exit(code);
}

}  // namespace kvscope
