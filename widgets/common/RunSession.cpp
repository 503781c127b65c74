#include "widgets/common/RunSession.h"

#include "core/model/Error.h"

namespace kvscope {

RunSession::RunSession(QObject* parent) : QObject(parent) {
  timer_.setInterval(33);
  timer_.setTimerType(Qt::PreciseTimer);
  connect(&timer_, &QTimer::timeout, this, &RunSession::drainNow);
}

// Not close(): the window's docks may be gone by now, so nobody is told.
RunSession::~RunSession() { stopSource(); }

void RunSession::open(std::unique_ptr<Source> source) {
  stopSource();
  store_.clear();
  source_ = std::move(source);
  emit sourceChanged();
  try {
    source_->start();
  } catch (const std::exception& e) {
    emit sourceFailed(QString::fromStdString(e.what()));
  }
  timer_.start();
}

void RunSession::stopSource() {
  timer_.stop();
  if (source_) source_->stop();
  source_.reset();
}

void RunSession::close() {
  const bool had = source_ != nullptr;
  stopSource();
  // Whoever keeps the Source* (the docks, for knobs, replay and worker health) drops it now.
  if (had) emit sourceChanged();
}

void RunSession::drainNow() {
  if (!source_) return;
  QElapsedTimer clock;
  clock.start();
  source_->staging().drain(batch_);
  last_batch_ = static_cast<int>(batch_.size());
  store_.ingest(batch_);
  for (EventSink* observer : observers_) {
    for (const Event& e : batch_) observer->onEvent(e);
    if (!batch_.empty()) observer->flush();  // a frame is a batch: a writer hands it to the OS
  }
  emit frame();  // panels skip the work themselves when neither the store nor their view moved
  last_frame_ms_ = static_cast<double>(clock.nsecsElapsed()) / 1e6;
}

}  // namespace kvscope
