#pragma once
// One writer per output directory: a sweep (or `sweep --resume`) holds an fcntl write lock on
// DIR/.kvscope.lock while it runs, so a second one in the same directory is refused with the
// first's pid instead of racing it (broken renames, summaries that miss runs). The lock goes with
// the process, a killed one included; the file stays, empty and harmless.
#include <optional>
#include <string>

namespace kvscope {

class DirectoryLock {
 public:
  // Creates `dir` when missing. nullopt with `error` ("DIR: in use by another sweep (pid N) ...").
  static std::optional<DirectoryLock> acquire(const std::string& dir, std::string* error);
  DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&&) = delete;
  DirectoryLock(const DirectoryLock&) = delete;
  ~DirectoryLock();

  static constexpr const char* kFileName = ".kvscope.lock";

  // Takes an fcntl write lock on the whole of `fd`'s file without waiting. False when another
  // process holds it: `holder` is then its pid as the kernel reports it, or "" when unknown.
  // Shared with AtomicFile::openForWrite, which locks a recording the same way.
  static bool lockForWriting(int fd, std::string* holder);

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kvscope
