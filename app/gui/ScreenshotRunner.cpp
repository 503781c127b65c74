#include "app/gui/ScreenshotRunner.h"

#include <QApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTimer>

#include <cstdio>

#include "app/gui/ExportActions.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PanelDocks.h"
#include "widgets/charts/DecodeLoadModel.h"
#include "widgets/charts/DecodeLoadPanel.h"
#include "widgets/common/RunSession.h"
#include "widgets/diagnosis/DiagnosisPanel.h"
#include "widgets/diagnosis/FindingsModel.h"

namespace kvscope {

ScreenshotRunner::ScreenshotRunner(MainWindow& window, QString path, double run_for_s, int wall_timeout_s)
    : QObject(&window),
      window_(window),
      path_(std::move(path)),
      target_(secondsToTime(run_for_s)),
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
  if (source->capabilities().pause && source->control() && !store.finished()) source->control()->pause(consoleAuthor());
  // Everything the source produced before it stood still, then every panel, visible or not.
  window_.session().drainNow();
  window_.docks().refresh(store, true);
  QApplication::processEvents();
  QString error;
  ExportActions exporter(window_, window_.session());
  done_ = false;
  if (!exporter.saveWindowPng(path_, &error)) return finish(1, QStringLiteral("kvscope: ") + error);
  if (!summary_path_.isEmpty()) {
    QSaveFile file(summary_path_);
    if (!file.open(QIODevice::WriteOnly) || file.write(summaryJson(window_)) < 0 || !file.commit())
      return finish(1, QStringLiteral("kvscope: cannot write %1: %2").arg(summary_path_, file.errorString()));
  }
  finish(0,
         QStringLiteral("kvscope: saved %1 at simulated %2 s").arg(path_).arg(timeToSeconds(store.now()), 0, 'f', 1));
}

QByteArray ScreenshotRunner::summaryJson(MainWindow& window) {
  QJsonObject root;
  const TelemetryStore& store = window.session().store();
  root["time_s"] = timeToSeconds(store.now());
  root["size"] = QJsonArray{window.width(), window.height()};
  QJsonArray findings;
  auto* diagnosis = qobject_cast<DiagnosisPanel*>(window.docks().panel("diagnosis"));
  for (const Finding& f : diagnosis->model()->findings()) {
    QJsonArray subjects;
    for (const std::string& s : f.subjects) subjects.append(QString::fromStdString(s));
    findings.append(QJsonObject{{"mode", QString::fromStdString(f.mode)},
                                {"name", QString::fromStdString(f.name)},
                                {"subjects", subjects},
                                {"start_s", f.window_start_s},
                                {"end_s", f.window_end_s}});
  }
  root["findings"] = findings;
  QJsonArray workers;
  const DecodeLoadModel& load = window.docks().decodeLoad().model();
  for (int row = 0; row < load.rowCount(); ++row) {
    const WorkerState& s = load.state(row);
    const WorkerRole role = store.workers()[static_cast<std::size_t>(s.store_index)].info.role;
    workers.append(QJsonObject{{"id", QString::fromStdString(s.worker)},
                               {"role", QString::fromLatin1(toString(role))},
                               {"state", QString::fromLatin1(toString(s.kind))},
                               {"cause", QString::fromStdString(s.cause)}});
  }
  root["workers"] = workers;
  root["workers_not_listed"] = load.hiddenCount();
  return QJsonDocument(root).toJson(QJsonDocument::Indented);
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
