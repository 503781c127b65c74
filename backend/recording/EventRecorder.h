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
  explicit EventRecorder(std::string path, double keyframe_interval_s = 10.0);
  ~EventRecorder() override;

  void onEvent(const Event& e) override;
  // Writes the index and closes; false with `error` when any write failed (the first failure).
  bool close(std::string* error);

 private:
  std::string path_;
  SimTime keyframe_interval_;
  SimTime last_keyframe_ = -1;
  std::unique_ptr<KvrecWriter> writer_;
  std::string buffer_;
  std::string error_;
};

}  // namespace kvscope
