#include "core/io/AtomicFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/io/DirectoryLock.h"
#include "core/io/InputFile.h"
#include "core/io/TemporaryFiles.h"

namespace kvscope {

namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel's ELOOP limit

std::string refused(const std::string& path, mode_t mode) {
  return path + ": is " + std::string(InputFile::kindOf(mode)) +
         ", not a regular file; give a file name (standard output is '-' where a command offers it)";
}

}  // namespace

std::string AtomicFile::partialPath(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / ("." + p.filename().string() + ".partial")).string();
}

std::optional<std::string> AtomicFile::target(const std::string& path, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<std::string> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  if (path.empty()) return fail("no file name given");
  std::filesystem::path p(path);
  for (int hops = 0; hops <= kMaxSymlinks; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p.string();  // a new file: created by the writer
      return fail(path + ": cannot inspect: " + std::strerror(errno));
    }
    if (S_ISREG(st.st_mode)) return p.string();
    if (!S_ISLNK(st.st_mode)) return fail(refused(path == p.string() ? path : path + " -> " + p.string(), st.st_mode));
    // A symlink is followed, so the link itself is never replaced by the rename.
    std::error_code ec;
    const std::filesystem::path to = std::filesystem::read_symlink(p, ec);
    if (ec) return fail(path + ": cannot read the symlink: " + ec.message());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return fail(path + ": too many levels of symbolic links");
}

bool AtomicFile::moveIntoPlace(const std::string& tmp, const std::string& path, std::string* error) {
  const auto to = target(path, error);
  if (to && std::rename(tmp.c_str(), to->c_str()) == 0) return true;
  if (to && error) *error = path + ": cannot rename into place: " + std::strerror(errno);
  std::remove(tmp.c_str());
  return false;
}

int AtomicFile::openForWrite(const std::string& path, std::string* error) {
  const auto to = target(path, error);
  if (!to) return -1;
  // O_NONBLOCK: a FIFO put in place after the check must not hang the open (it fails with ENXIO).
  const int fd = ::open(to->c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    if (error) *error = path + ": cannot create: " + std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (error) *error = refused(path, st.st_mode);
    ::close(fd);
    return -1;
  }
  // Lock, then truncate: truncating first would wreck the file of the writer that holds it.
  if (std::string pid; !DirectoryLock::lockForWriting(fd, &pid)) {
    if (error)
      *error = path + ": another writer has it open" + (pid.empty() ? "" : " (pid " + pid + ")") +
               "; two writers would interleave into one corrupt file";
    ::close(fd);
    return -1;
  }
  if (::ftruncate(fd, 0) != 0) {
    if (error) *error = path + ": cannot truncate: " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

namespace {

// Writes `content` to `tmp` and flushes it to disk; false with `error` (and `tmp` removed) on failure.
bool writeTemporary(const std::string& path, const std::string& tmp, const std::string& content, std::string* error) {
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
      if (n == 0) errno = ENOSPC;
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
  return true;
}

}  // namespace

bool AtomicFile::write(const std::string& path, const std::string& content, std::string* error) {
  return writeSet({{path, content}}, error);
}

bool AtomicFile::writeSet(const std::vector<std::pair<std::string, std::string>>& files, std::string* error) {
  std::vector<std::string> targets, temporaries;
  std::vector<std::unique_ptr<TemporaryFiles::Guard>> removed_on_interrupt;
  auto discard = [&] {
    for (const auto& tmp : temporaries) std::remove(tmp.c_str());
    return false;
  };
  for (const auto& [path, content] : files) {
    const auto to = target(path, error);
    if (!to) return discard();
    const std::string tmp = partialPath(*to);
    removed_on_interrupt.push_back(std::make_unique<TemporaryFiles::Guard>(tmp));
    if (!writeTemporary(path, tmp, content, error)) return discard();
    targets.push_back(path);
    temporaries.push_back(tmp);
  }
  // Every file is whole on disk before the first rename: a full disk leaves the old set as it was.
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (!moveIntoPlace(temporaries[i], targets[i], error)) {
      temporaries.erase(temporaries.begin(), temporaries.begin() + static_cast<std::ptrdiff_t>(i + 1));
      return discard();
    }
  return true;
}

}  // namespace kvscope
