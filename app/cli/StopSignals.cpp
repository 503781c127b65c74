#include "app/cli/StopSignals.h"

namespace kvscope::cli {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int StopSignals::wait(std::chrono::milliseconds timeout) const {
  const timespec interval{static_cast<time_t>(timeout.count() / 1000),
                          static_cast<long>(timeout.count() % 1000) * 1000000L};
  const int signal_number = sigtimedwait(&set_, nullptr, &interval);
  return signal_number > 0 ? signal_number : 0;
}

}  // namespace kvscope::cli
