#pragma once
// Follows several log files as `tail -F` does, on one thread: from the end (the
// default: a live view starts now) or from the beginning; a file renamed away and replaced (log
// rotation) is read to its end, then the new file from its start; a file truncated in place is read
// again from its start; a file that does not exist yet is waited for. A line is delivered only once
// its newline arrives (a writer's half-written last line is held); a line longer than the limit is
// delivered cut and the rest of it skipped, so a runaway writer cannot grow memory.
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace kvscope {

struct TailOptions {
  bool from_start = false;  // read what the files already hold
  int poll_ms = 100;
  std::size_t max_line_bytes = 64u << 10;
  std::size_t max_read_per_poll = 4u << 20;  // per file, so one busy file cannot starve the others
  int idle_ms = 500;                         // quiet this long after data: the idle handler runs (once)
};

struct TailFileStats {
  std::string path;
  bool open = false;
  std::string error;  // why it cannot be read now ("" when fine)
  long lines = 0, long_lines = 0, rotations = 0, truncations = 0;
  std::uint64_t bytes = 0;
};

class LogTailer {
 public:
  using LineHandler = std::function<void(std::size_t file, std::string_view line)>;
  using IdleHandler = std::function<void(std::size_t file)>;

  LogTailer(std::vector<std::string> paths, TailOptions options, LineHandler on_line, IdleHandler on_idle = {});
  ~LogTailer();  // stop()

  void start();  // the polling thread
  void stop();   // idempotent
  // One pass over every file, on the caller's thread (tests, or a caller with its own loop). The
  // first pass opens the files: at their end unless from_start.
  void poll();

  std::vector<TailFileStats> stats() const;

 private:
  struct File;
  void pollFile(std::size_t index, File& f, bool first);
  void deliver(std::size_t index, File& f, const char* data, std::size_t size);

  TailOptions options_;
  LineHandler on_line_;
  IdleHandler on_idle_;
  std::vector<std::unique_ptr<File>> files_;
  mutable std::mutex mutex_;  // guards files_' state between poll() and stats()
  bool first_poll_ = true;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace kvscope
