#pragma once
// What an operator can do to a run, whatever drives it (an embedded simulation, a recording in
// replay): change knobs and policy, pause, resume, change speed, seek. Calls come from any thread;
// results are reported through callbacks, never by blocking the caller. `author` names who made
// a change (and, for a remote call, where it came from: ChangeAuthor.h); every change that takes effect appears in the
// run's event stream with it (KnobChanged, PolicyChanged, RunControlChanged), a call that changes nothing adds no
// event.
#include <functional>
#include <map>
#include <string>

#include "core/knobs/KnobRegistry.h"
#include "core/model/Ids.h"
#include "core/run/RunMarkBook.h"

namespace kvscope {

// A policy change's result: refused only for a name the router does not know.
inline KnobRegistry::Result policyResult(bool ok, const std::string& name) {
  if (ok) return {};
  return {false, "unknown policy '" + name + "'", {}};
}

class RunControl {
 public:
  virtual ~RunControl() = default;

  // Knob and policy changes need a live run; a recording cannot change what happened.
  virtual bool canChangeKnobs() const = 0;
  // All-or-nothing; `done` runs once the change is applied (or refused, with the reason), on the
  // run's own thread (a remote run's: on a gRPC thread).
  using Done = std::function<void(KnobRegistry::Result)>;
  virtual void applyKnobs(std::map<std::string, double> changes, ChangeAuthor author, Done done) = 0;
  virtual void setPolicy(std::string name, ChangeAuthor author, Done done) = 0;

  // A real cluster runs at its own pace: pause, resume and speed mean nothing there.
  virtual bool canPace() const { return true; }
  virtual void pause(ChangeAuthor author) = 0;  // returns once the run stands still between events
  virtual void resume(ChangeAuthor author) = 0;
  virtual void setSpeed(double speed, ChangeAuthor author) = 0;  // x real time; 0 = as fast as possible

  // Seeking is for recordings; a live simulation cannot go back in time.
  virtual bool canSeek() const = 0;
  virtual bool seek(SimTime time, ChangeAuthor author, std::string* error) = 0;
  virtual SimTime endTime() const = 0;

  // Run markers split a live session into the runs of a sweep; a simulation or a replay is one run
  // already, so only a live run control takes them. `done` gets the markers that entered the stream
  // (or why none did), on the caller's thread.
  virtual bool canMarkRuns() const { return false; }
  virtual void markRun(RunMarkRequest request, std::function<void(RunMarkResult)> done) {
    (void)request;
    done(RunMarkResult{{}, "only a live session takes run markers", true});
  }

  virtual bool paused() const = 0;
  virtual double speed() const = 0;
  virtual SimTime simTime() const = 0;
};

}  // namespace kvscope
