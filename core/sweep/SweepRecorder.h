#pragma once
// Where a sweep run's events are recorded. core/ knows no file format: the CLI hands the runner a
// factory that wraps the backend's .kvrec recorder.
#include <functional>
#include <memory>
#include <string>

#include "core/events/Event.h"

namespace kvscope {

class SweepRecorder {
 public:
  virtual ~SweepRecorder() = default;
  virtual EventSink& sink() = 0;
  // Finishes the file; false with `error` when anything failed to write.
  virtual bool close(std::string* error) = 0;
};

using SweepRecorderFactory = std::function<std::unique_ptr<SweepRecorder>(const std::string& path)>;

}  // namespace kvscope
