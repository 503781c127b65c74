#pragma once
// Records an event stream into a .kvrec file: each event a protobuf frame, a Snapshot marked as a
// keyframe every `keyframe_interval_s` of run time (seek starts there), the index written on close.
// The file is created when the run's RunStarted event arrives (its header carries the run's metadata).
#include <memory>
#include <string>

#include "core/events/Event.h"

namespace kvscope {

class KvrecWriter;

class EventRecorder : public EventSink {
 public:
  // Opens (creates or truncates) and locks the file at once, so a folder that cannot take it or a
  // second writer is known before the run starts: see error().
  explicit EventRecorder(std::string path, double keyframe_interval_s = 10.0);
  ~EventRecorder() override;
  // The first failure so far (opening, or a write); empty while all is well.
  const std::string& error() const { return error_; }

  void onEvent(const Event& e) override;
  // Writes the buffered frames out (to the OS, not fsync'ed: they survive the process, not the machine).
  void flush() override;
  // Writes the index and closes; false with `error` when any write failed (the first failure).
  bool close(std::string* error);

 private:
  std::string path_;
  SimTime keyframe_interval_;
  SimTime last_keyframe_ = -1;
  int fd_ = -1;  // opened and locked at construction, handed to the writer at RunStarted
  std::unique_ptr<KvrecWriter> writer_;
  std::string buffer_;
  std::string error_;
};

}  // namespace kvscope
