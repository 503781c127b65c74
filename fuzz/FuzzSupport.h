#pragma once
// What every fuzz target shares: how a broken invariant is reported (a finding aborts, so libFuzzer
// keeps the input), how an input is cut into NUL-separated parts or lines, and where input files go.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace kvscope::fuzz {

// A broken invariant: printed, then abort() so that libFuzzer saves the input as a crash.
[[noreturn]] inline void finding(std::string_view what) {
  std::fprintf(stderr, "kvscope fuzz finding: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}
// The same for a target that fed the input through a file: the file is named.
[[noreturn]] inline void finding(std::string_view what, const std::string& input_path) {
  std::fprintf(stderr, "kvscope fuzz finding: %.*s (input file %s)\n", static_cast<int>(what.size()), what.data(),
               input_path.c_str());
  std::abort();
}

// The next NUL-separated part of `rest` (all of it when there is no NUL), and `rest` moves past it.
inline std::string_view nextPart(std::string_view& rest) {
  const auto nul = rest.find('\0');
  const std::string_view out = rest.substr(0, nul);
  rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  return out;
}

// Calls f(line) for each '\n'-terminated line, and for a last line without one; returns how many
// (what a reader's line count must be).
template <class F>
long forEachLine(std::string_view text, F&& f) {
  long lines = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    ++lines;
    f(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// One directory per process (libFuzzer -fork/-jobs run several), reused for every input and removed
// at exit. On tmpfs when there is one: on ext4, rewriting a file costs milliseconds (delayed-
// allocation flushes). KVSCOPE_FUZZ_TMPDIR overrides the choice.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string tmpl = (root() / ("kvscope-fuzz-" + tag + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) {
      std::perror("kvscope fuzz: mkdtemp");
      std::abort();
    }
    dir_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  // A new file each time (unlink, then create) rather than truncating the old one in place: a reader
  // that still maps the previous input never sees it change.
  static void write(const std::string& path, const void* data, std::size_t size) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) fail("removing the previous input file");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) fail("creating the input file");
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("writing the input file");
      p += n;
      size -= static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  static void write(const std::string& path, std::string_view text) { write(path, text.data(), text.size()); }

 private:
  static std::filesystem::path root() {
    if (const char* dir = std::getenv("KVSCOPE_FUZZ_TMPDIR"); dir && *dir) return dir;
    std::error_code ec;
    if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
    return std::filesystem::temp_directory_path();
  }
  [[noreturn]] static void fail(const char* what) {
    std::perror((std::string("kvscope fuzz: ") + what).c_str());
    std::abort();
  }

  std::filesystem::path dir_;
};

}  // namespace kvscope::fuzz
