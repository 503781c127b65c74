#include "core/io/DirectoryLock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kvscope {

std::optional<DirectoryLock> DirectoryLock::acquire(const std::string& dir, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<DirectoryLock> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fail(dir + ": cannot create: " + ec.message());
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return fail(path + ": cannot open: " + std::strerror(errno));
  if (std::string pid; !lockForWriting(fd, &pid)) {
    ::close(fd);
    return fail(dir + ": in use by another sweep" + (pid.empty() ? "" : " (pid " + pid + ")") +
                "; wait for it to end, or give another --out");
  }
  return DirectoryLock(fd);
}

bool DirectoryLock::lockForWriting(int fd, std::string* holder) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd, F_SETLK, &lock) == 0) return true;
  struct flock other {};
  other.l_type = F_WRLCK;
  other.l_whence = SEEK_SET;
  const bool known = ::fcntl(fd, F_GETLK, &other) == 0 && other.l_type != F_UNLCK;
  if (holder) *holder = known ? std::to_string(other.l_pid) : std::string();
  return false;
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kvscope
