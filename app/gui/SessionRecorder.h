#pragma once
// File > Record this session: what the console receives from now on goes to a .kvrec (the run's
// RunStarted first, so the recording replays with its workers), whatever the source (a served or
// live cluster, a simulation, a replay). Stops at File > Stop recording, when the source changes,
// or when the window closes; a failed write (a full disk) stops it and says why.
#include <QObject>
#include <QString>

#include <memory>

#include "core/events/Event.h"

namespace kvscope {

class EventRecorder;
class RunSession;

class SessionRecorder : public QObject, public EventSink {
  Q_OBJECT
 public:
  SessionRecorder(RunSession& session, QObject* parent = nullptr);
  ~SessionRecorder() override;

  // Starts recording to `path` (created or replaced); false with `error` when it cannot (no run
  // yet, the file cannot be created or another writer holds it).
  bool start(const QString& path, QString* error);
  // Closes the file; false with `error` when a write failed along the way.
  bool stop(QString* error);
  bool recording() const { return recorder_ != nullptr; }
  const QString& path() const { return path_; }

  void onEvent(const Event& e) override;
  void flush() override;

 signals:
  void recordingChanged(bool recording);
  void failed(const QString& message);

 private:
  RunSession& session_;
  std::unique_ptr<EventRecorder> recorder_;
  QString path_;
};

}  // namespace kvscope
