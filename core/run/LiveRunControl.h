#pragma once
// The RunControl of a real cluster: it runs at its own pace and cannot go back in time, so pause,
// resume, speed and seek are refused (Control answers FAILED_PRECONDITION) and only knobs and
// policy remain for the subclass (the live router, the live session).
#include "run/RunControl.h"

namespace kvscope {

class LiveRunControl : public RunControl {
 public:
  bool canPace() const override { return false; }
  void pause(std::string) override {}
  void resume(std::string) override {}
  void setSpeed(double, std::string) override {}
  bool canSeek() const override { return false; }
  bool seek(SimTime, std::string, std::string* error) override {
    if (error) *error = "a live cluster cannot seek";
    return false;
  }
  SimTime endTime() const override { return 0; }
  bool paused() const override { return false; }
  double speed() const override { return 1; }
};

}  // namespace kvscope
