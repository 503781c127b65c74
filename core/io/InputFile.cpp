#include "core/io/InputFile.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/model/Error.h"

namespace kvscope::InputFile {

const char* kindOf(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

void requireRegular(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(formatInputError(
        path, 0, "", errno == ENOENT ? "no such file" : std::string("cannot open: ") + std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw InputError(
        formatInputError(path, 0, "", std::string("is ") + kindOf(st.st_mode) + ", expected a regular file"));
}

std::ifstream open(const std::string& path) {
  requireRegular(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(formatInputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno)));
  return in;
}

std::string readAll(const std::string& path, std::size_t max_bytes) {
  std::ifstream in = open(path);
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw InputError(formatInputError(
          path, 0, "", "larger than " + std::to_string(max_bytes >> 20) + " MiB; this input is a small text file"));
  }
  if (in.bad()) throw InputError(formatInputError(path, 0, "", std::string("read error: ") + std::strerror(errno)));
  return text;
}

bool readLine(std::istream& in, std::string& line, bool* too_long, const std::string& path, std::size_t max_bytes) {
  line.clear();
  if (too_long) *too_long = false;
  // istream::getline in chunks (it scans its buffer with memchr, unlike a byte-by-byte loop): a
  // full chunk without its newline sets failbit, which is cleared to read on.
  char chunk[1 << 14];
  bool any = false;
  for (;;) {
    in.getline(chunk, sizeof chunk);
    const auto got = static_cast<std::size_t>(in.gcount());
    const bool cut = in.fail() && !in.eof() && got == sizeof chunk - 1;           // the line goes on
    const std::size_t text = cut ? got : (got > 0 && !in.eof() ? got - 1 : got);  // without the '\n'
    any |= got > 0;
    const std::size_t room = max_bytes - std::min(max_bytes, line.size());
    line.append(chunk, std::min(text, room));
    if (text > room && too_long) *too_long = true;
    if (!cut) break;
    in.clear();
  }
  if (in.bad()) throw InputError(formatInputError(path, 0, "", std::string("read error: ") + std::strerror(errno)));
  return any || !in.eof();
}

}  // namespace kvscope::InputFile
