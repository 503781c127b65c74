#include "cli/ServeSupport.h"

#include <cstdio>
#include <ctime>

#include "model/Error.h"

namespace kvscope::cli {

ServeOutputs::ServeOutputs(const ServeArgs& a) : sinks_{&hub_} {
  if (!a.record.empty()) {
    recorder_ = std::make_unique<EventRecorder>(a.record);
    sinks_.push_back(recorder_.get());
  }
  if (!a.metrics.empty()) {
    std::string why;
    metrics_server_ = MetricsHttpServer::start(a.metrics, a.server.insecure, metrics_, &why);
    if (!metrics_server_) throw InputError(why);
    sinks_.push_back(&metrics_);
  }
}

void ServeOutputs::announce(const KvscopeServer& server) const {
  std::printf("listening on %s\n", server.address().c_str());
  if (metrics_server_) std::printf("metrics on http://%s/metrics\n", metrics_server_->address().c_str());
  std::fflush(stdout);
}

void ServeOutputs::close() {
  if (metrics_server_) metrics_server_->stop();
  std::string error;
  if (recorder_ && !recorder_->close(&error)) throw InputError(error);
}

void ServeOutputs::abandon() {
  if (metrics_server_) metrics_server_->stop();
  if (recorder_) recorder_->close(nullptr);
}

sigset_t blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int waitForStop(const sigset_t& stop_signals, bool exit_when_done, const std::function<bool()>& done,
                const std::function<void()>& tick) {
  const timespec interval{0, 200 * 1000 * 1000};
  while (true) {
    const int signal_number = sigtimedwait(&stop_signals, nullptr, &interval);
    if (signal_number > 0) return signal_number;
    if (tick) tick();
    if (exit_when_done && done()) return 0;
  }
}

}  // namespace kvscope::cli
