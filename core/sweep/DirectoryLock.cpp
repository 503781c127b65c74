#include "core/sweep/DirectoryLock.h"

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
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd, F_SETLK, &lock) != 0) {
    struct flock holder {};
    holder.l_type = F_WRLCK;
    holder.l_whence = SEEK_SET;
    const bool known = ::fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
    ::close(fd);
    return fail(dir + ": in use by another sweep" + (known ? " (pid " + std::to_string(holder.l_pid) + ")" : std::string()) +
                "; wait for it to end, or give another --out");
  }
  return DirectoryLock(fd);
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kvscope
