#include "app/gui/SessionRecorder.h"

#include <QFile>

#include "backend/recording/EventRecorder.h"
#include "widgets/common/RunSession.h"

namespace kvscope {

SessionRecorder::SessionRecorder(RunSession& session, QObject* parent) : QObject(parent), session_(session) {
  session_.addObserver(this);  // for the session's life; records only while recording()
  // Another source is another run: its recording is another file.
  connect(&session_, &RunSession::sourceChanged, this, [this] {
    QString error;
    if (recording() && !stop(&error)) emit failed(error);
  });
}

SessionRecorder::~SessionRecorder() {
  QString ignored;
  stop(&ignored);
}

bool SessionRecorder::start(const QString& path, QString* error) {
  const TelemetryStore& store = session_.store();
  if (!store.run()) {
    if (error) *error = tr("nothing to record yet: no run has started");
    return false;
  }
  QString ignored;
  stop(&ignored);
  auto recorder = std::make_unique<EventRecorder>(QFile::encodeName(path).toStdString());
  if (!recorder->error().empty()) {
    if (error) *error = QString::fromStdString(recorder->error());
    return false;
  }
  // The run's start, as the first frame: a recording begun mid-run still knows its workers. Its
  // sequence number is the last one the console has, so every event after it comes in order.
  recorder->onEvent(Event{store.lastSeq(), store.now(), *store.run()});
  recorder_ = std::move(recorder);
  path_ = path;
  emit recordingChanged(true);
  return true;
}

bool SessionRecorder::stop(QString* error) {
  if (!recorder_) return true;
  std::string why;
  const bool ok = recorder_->close(&why);
  recorder_.reset();
  if (!ok && error) *error = QString::fromStdString(why);
  emit recordingChanged(false);
  return ok;
}

void SessionRecorder::onEvent(const Event& e) {
  if (!recorder_) return;
  recorder_->onEvent(e);
  if (!recorder_->error().empty()) {
    const QString message = tr("Recording %1 stopped: %2").arg(path_, QString::fromStdString(recorder_->error()));
    QString ignored;
    stop(&ignored);
    emit failed(message);
  }
}

void SessionRecorder::flush() {
  if (recorder_) recorder_->flush();
}

}  // namespace kvscope
