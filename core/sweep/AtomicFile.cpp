#include "sweep/AtomicFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace kvscope {

std::string AtomicFile::partialPath(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + ".partial")).string();
}

bool AtomicFile::write(const std::string& path, const std::string& content, std::string* error) {
  const std::string tmp = partialPath(path);
  auto fail = [&](const char* what) {
    if (error) *error = path + ": " + what + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create");
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return fail("cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
  // On disk before the rename: a crash after it must not expose an empty file under the real name.
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("cannot flush");
  }
  if (::close(fd) != 0) return fail("cannot close");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename into place");
  return true;
}

}  // namespace kvscope
