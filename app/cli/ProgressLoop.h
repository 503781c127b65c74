#pragma once
// The long commands' foreground loop (sweep, calibrate fit, calibrate check): the work runs on a
// thread while this one shows a progress line on stderr and waits for Ctrl+C. On a terminal the line
// is redrawn in place (\r); otherwise a plain line is printed when its count moves (the text before
// its first '(') and at most every 10 s else. SIGINT/SIGTERM set the cancel flag the work watches,
// once, with a message; the work decides what to keep.
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace kvscope::cli {

class ProgressLoop {
 public:
  bool quiet = false;
  std::string stopping;  // what the interrupt message says is happening ("stopping the running runs")

  // The work's current progress line, from any thread; the loop shows the latest at its next tick.
  void post(std::string line);
  // Runs `work(cancel)` on a thread until it returns; rethrows what it threw. True when interrupted.
  bool run(const std::function<void(const std::atomic<bool>& cancel)>& work);

 private:
  std::optional<std::string> take();  // the line posted since the last take, if any

  std::mutex mutex_;
  std::optional<std::string> posted_;
};

}  // namespace kvscope::cli
