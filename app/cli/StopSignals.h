#pragma once
// SIGINT and SIGTERM taken synchronously, the one way every long-running command stops (serve waits
// for them, sweep and calibrate turn them into their cancel flag): constructing this blocks both in
// the calling thread before it starts any other, every thread inherits the mask, so the signals reach
// only wait() and no handler runs at an arbitrary point of some thread.
#include <signal.h>

#include <chrono>

namespace kvscope::cli {

class StopSignals {
 public:
  StopSignals();
  // The signal that arrived (SIGINT or SIGTERM), or 0 when `timeout` passed first.
  int wait(std::chrono::milliseconds timeout) const;

 private:
  sigset_t set_;
};

}  // namespace kvscope::cli
