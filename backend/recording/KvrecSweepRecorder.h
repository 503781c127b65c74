#pragma once
// The backend's .kvrec recorder behind core's SweepRecorder interface, so a sweep run from the
// console and `kvscope-cli sweep` record every run the same way (core cannot see the file format).
#include <memory>
#include <string>

#include "backend/recording/EventRecorder.h"
#include "core/sweep/SweepRecorder.h"

namespace kvscope {

class KvrecSweepRecorder : public SweepRecorder {
 public:
  explicit KvrecSweepRecorder(const std::string& path) : recorder_(path) {}
  // What a sweep's runner is given: each run recorded as a .kvrec at its path.
  static SweepRecorderFactory factory() {
    return [](const std::string& path) { return std::make_unique<KvrecSweepRecorder>(path); };
  }
  EventSink& sink() override { return recorder_; }
  bool close(std::string* error) override { return recorder_.close(error); }

 private:
  EventRecorder recorder_;
};

}  // namespace kvscope
