#pragma once
// The console's one live run: the Source it watches, the TelemetryStore the panels read, and the
// fixed frame timer (~30 fps) that drains the source's staging buffer into the store (ARCHITECTURE.md:
// the GUI never gets a signal per event). Also measures what the frame benchmark reports.
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <memory>
#include <vector>

#include "core/source/Source.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

class RunSession : public QObject {
  Q_OBJECT
 public:
  explicit RunSession(QObject* parent = nullptr);
  ~RunSession() override;

  // Stops the current source, forgets its data and starts `source`.
  void open(std::unique_ptr<Source> source);
  // Stops the source; sourceChanged tells its holders that source() is now null.
  void close();
  Source* source() const { return source_.get(); }
  const TelemetryStore& store() const { return store_; }
  TelemetryStore& store() { return store_; }

  // A sink that sees every drained event after the store, on the GUI thread (the Runs list's
  // splitter): the frame's drain stays the one path events take into the console.
  void addObserver(EventSink* sink) { observers_.push_back(sink); }

  void setFrameInterval(int ms) { timer_.setInterval(ms); }
  // One drain + ingest + frame signal, as the timer does (tests and benchmarks call it directly).
  void drainNow();

  int lastBatchSize() const { return last_batch_; }
  // Time the last drain + ingest + panel refresh took (what one frame costs the GUI thread).
  double lastFrameMs() const { return last_frame_ms_; }

 signals:
  void sourceChanged();
  void frame();  // after a drain; panels refresh from store()
  void sourceFailed(const QString& message);

 private:
  void stopSource();

  std::unique_ptr<Source> source_;
  TelemetryStore store_;
  QTimer timer_;
  std::vector<Event> batch_;
  std::vector<EventSink*> observers_;
  int last_batch_ = 0;
  double last_frame_ms_ = 0;
};

}  // namespace kvscope
