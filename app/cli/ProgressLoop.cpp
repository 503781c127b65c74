#include "app/cli/ProgressLoop.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <thread>

#include "app/cli/StopSignals.h"

namespace kvscope::cli {

void ProgressLoop::post(std::string line) {
  std::lock_guard lock(mutex_);
  posted_ = std::move(line);
}

std::optional<std::string> ProgressLoop::take() {
  std::lock_guard lock(mutex_);
  std::optional<std::string> line = std::move(posted_);
  posted_.reset();
  return line;
}

bool ProgressLoop::run(const std::function<void(const std::atomic<bool>&)>& work) {
  const StopSignals stop;  // before the worker starts: it inherits the mask

  std::atomic<bool> cancel{false}, finished{false};
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      work(cancel);
    } catch (...) {
      failure = std::current_exception();
    }
    finished = true;
  });
  const bool tty = isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  double last_plain = -1e9;
  std::string last_line, latest;
  auto show = [&](bool final) {
    if (quiet) return;
    const auto polled = take();
    if (polled) latest = *polled;
    if ((!polled && !final) || latest.empty()) return;
    if (tty) {
      std::fprintf(stderr, "\r%-110s%s", latest.c_str(), final ? "\n" : "");
    } else {
      const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const bool moved = latest.substr(0, latest.find('(')) != last_line.substr(0, last_line.find('('));
      if (latest != last_line && (moved || now - last_plain >= 10)) {
        std::fprintf(stderr, "%s\n", latest.c_str());
        last_plain = now;
        last_line = latest;
      }
    }
    std::fflush(stderr);
  };
  while (!finished.load()) {
    const int sig = stop.wait(std::chrono::milliseconds(250));
    if (sig > 0 && !cancel.load()) {
      cancel = true;
      std::fprintf(stderr, "%skvscope-cli: interrupted: %s...\n", tty && !quiet ? "\n" : "", stopping.c_str());
    }
    show(false);
  }
  worker.join();
  if (failure) std::rethrow_exception(failure);
  show(true);
  return cancel.load();
}

}  // namespace kvscope::cli
