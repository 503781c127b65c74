#include "backend/live/LogTailer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace kvscope {

struct LogTailer::File {
  std::string path;
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t offset = 0;
  std::string partial;    // bytes after the last newline
  bool skipping = false;  // inside an over-long line, dropping bytes until its newline
  bool had_data = false;  // since the last idle notice
  std::chrono::steady_clock::time_point last_data;
  TailFileStats stats;

  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    stats.open = false;
  }
  ~File() { close(); }
};

LogTailer::LogTailer(std::vector<std::string> paths, TailOptions options, LineHandler on_line, IdleHandler on_idle)
    : options_(options), on_line_(std::move(on_line)), on_idle_(std::move(on_idle)) {
  for (auto& p : paths) {
    auto f = std::make_unique<File>();
    f->path = p;
    f->stats.path = std::move(p);
    files_.push_back(std::move(f));
  }
}

LogTailer::~LogTailer() { stop(); }

void LogTailer::start() {
  if (running_.exchange(true)) return;
  thread_ = std::thread([this] {
    while (running_) {
      poll();
      // Short sleeps so stop() returns promptly.
      for (int slept = 0; running_ && slept < options_.poll_ms; slept += 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10, options_.poll_ms)));
    }
  });
}

void LogTailer::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void LogTailer::poll() {
  std::lock_guard lock(mutex_);
  const bool first = std::exchange(first_poll_, false);
  for (std::size_t i = 0; i < files_.size(); ++i) pollFile(i, *files_[i], first);
}

std::vector<TailFileStats> LogTailer::stats() const {
  std::lock_guard lock(mutex_);
  std::vector<TailFileStats> out;
  for (const auto& f : files_) out.push_back(f->stats);
  return out;
}

void LogTailer::deliver(std::size_t index, File& f, const char* data, std::size_t size) {
  std::size_t start = 0;
  while (start < size) {
    const void* nl = std::memchr(data + start, '\n', size - start);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data) : size;
    if (!f.skipping) {
      const std::size_t room = options_.max_line_bytes - f.partial.size();
      const std::size_t take = std::min(room, end - start);
      f.partial.append(data + start, take);
      if (take < end - start || (f.partial.size() >= options_.max_line_bytes && !nl)) {
        // Over the limit: deliver what fits, drop the rest of this line.
        ++f.stats.long_lines;
        ++f.stats.lines;
        on_line_(index, f.partial);
        f.partial.clear();
        f.skipping = true;
      }
    }
    if (!nl) break;
    if (!f.skipping) {
      if (!f.partial.empty() && f.partial.back() == '\r') f.partial.pop_back();
      ++f.stats.lines;
      on_line_(index, f.partial);
    }
    f.partial.clear();
    f.skipping = false;
    start = end + 1;
  }
}

void LogTailer::pollFile(std::size_t index, File& f, bool first) {
  struct stat by_name {};
  const bool exists = ::stat(f.path.c_str(), &by_name) == 0;
  const bool replaced = exists && f.fd >= 0 && (by_name.st_ino != f.ino || by_name.st_dev != f.dev);
  if (f.fd < 0) {
    if (!exists) {
      f.stats.error = std::string("cannot read: ") + std::strerror(errno);
      return;
    }
    // A log is a regular file. A FIFO nobody writes would block open(2) - and with it this thread and
    // a SIGTERM's shutdown - and a device never ends: both are refused, checked again
    // after a non-blocking open in case the name changed in between.
    if (!S_ISREG(by_name.st_mode)) {
      f.stats.error = "not a regular file (a FIFO, device or directory cannot be followed as a log)";
      return;
    }
    f.fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f.fd < 0) {
      f.stats.error = std::string("cannot open: ") + std::strerror(errno);
      return;
    }
    struct stat st {};
    if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(f.fd);
      f.fd = -1;
      f.stats.error = "not a regular file (a FIFO, device or directory cannot be followed as a log)";
      return;
    }
    f.dev = st.st_dev;
    f.ino = st.st_ino;
    // A file there when tailing starts is history unless asked for; one that appears later is new.
    f.offset = (first && !options_.from_start) ? st.st_size : 0;
    f.partial.clear();
    f.skipping = false;
    f.stats.open = true;
    f.stats.error.clear();
  }
  struct stat st {};
  if (::fstat(f.fd, &st) == 0 && st.st_size < f.offset) {
    // Truncated in place (copytruncate rotation, or `> file`): start over; a held partial line is gone.
    ++f.stats.truncations;
    f.offset = 0;
    f.partial.clear();
    f.skipping = false;
  }
  std::size_t budget = options_.max_read_per_poll;
  char buf[64 * 1024];
  bool got = false;
  while (budget > 0) {
    const ssize_t n = ::pread(f.fd, buf, std::min(sizeof buf, budget), f.offset);
    if (n <= 0) break;
    got = true;
    f.offset += n;
    f.stats.bytes += static_cast<std::uint64_t>(n);
    budget -= static_cast<std::size_t>(n);
    deliver(index, f, buf, static_cast<std::size_t>(n));
  }
  const auto now = std::chrono::steady_clock::now();
  if (got) {
    f.had_data = true;
    f.last_data = now;
  } else if (replaced && budget > 0) {
    // Renamed away and fully read: the writer now writes the new file. A partial last line of the
    // old file will never be finished: deliver it.
    if (!f.partial.empty() && !f.skipping) {
      ++f.stats.lines;
      on_line_(index, f.partial);
    }
    f.close();
    ++f.stats.rotations;
    pollFile(index, f, false);  // the new file, from its start
    return;
  } else if (!exists && f.fd >= 0) {
    f.stats.error = "removed; waiting for it to come back";
  }
  if (f.had_data && on_idle_ && now - f.last_data >= std::chrono::milliseconds(options_.idle_ms)) {
    f.had_data = false;
    on_idle_(index);
  }
}

}  // namespace kvscope
