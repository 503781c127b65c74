#pragma once
// The RunControl of a real cluster: it runs at its own pace and cannot go back in time, so pause,
// resume, speed and seek are refused (Control answers FAILED_PRECONDITION) and only knobs, policy
// and run markers remain for the subclass (the live router, the live session).
#include <mutex>

#include "core/run/RunControl.h"

namespace kvscope {

class LiveRunControl : public RunControl {
 public:
  bool canPace() const override { return false; }
  void pause(ChangeAuthor) override {}
  void resume(ChangeAuthor) override {}
  void setSpeed(double, ChangeAuthor) override {}
  bool canSeek() const override { return false; }
  bool seek(SimTime, ChangeAuthor, std::string* error) override {
    if (error) *error = "a live cluster cannot seek";
    return false;
  }
  SimTime endTime() const override { return 0; }
  bool paused() const override { return false; }
  double speed() const override { return 1; }

  bool canMarkRuns() const override { return true; }
  void markRun(RunMarkRequest request, std::function<void(RunMarkResult)> done) override {
    RunMarkResult result;
    {
      // One lock around the book and the publishing, so the stream has the markers in book order.
      std::lock_guard lock(marks_mutex_);
      result = marks_.mark(std::move(request));
      for (const auto& m : result.marks) publishMark(m);
    }
    done(std::move(result));
  }

 protected:
  // Puts a marker into the run's stream (called in order, under the markers' lock).
  virtual void publishMark(const RunMarked& mark) = 0;
  // At the session's end: a run still open ends there, before RunFinished.
  void closeOpenRun() {
    std::lock_guard lock(marks_mutex_);
    if (auto end = marks_.closeOpen(kRunEndedBySession)) publishMark(*end);
  }

 private:
  std::mutex marks_mutex_;
  RunMarkBook marks_;
};

}  // namespace kvscope
