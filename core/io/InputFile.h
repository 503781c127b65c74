#pragma once
// Files a command reads. Only regular files: a FIFO blocks for ever, a device never ends (a copy of
// /dev/zero is one endless line), a directory reads as nothing. Whole-file inputs (JSON, YAML) are
// bounded in size and line-based ones in line length, so no input can take the machine's memory;
// a failed read is an error, never a short input.
#include <cstddef>
#include <fstream>
#include <istream>
#include <string>

namespace kvscope::InputFile {

inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;    // a log or trace line
inline constexpr std::size_t kMaxWholeBytes = std::size_t{64} << 20;  // a scenario, cluster, sweep, target

// What a file type (stat's st_mode) is called in messages: "a directory", "a FIFO", ...
const char* kindOf(unsigned mode);

// Throws InputError "PATH: is a FIFO, expected a regular file" (or "no such file", "cannot open").
void requireRegular(const std::string& path);
// requireRegular, then the file opened for binary reading.
std::ifstream open(const std::string& path);
// The whole file, at most `max_bytes` (InputError naming the size otherwise, or a read error).
std::string readAll(const std::string& path, std::size_t max_bytes = kMaxWholeBytes);

// One line (without its '\n'), as std::getline, but at most `max_bytes` of it are kept: a longer
// line is read to its end, `line` holds its first max_bytes and `*too_long` is set. False at the
// end of the input; throws InputError naming `path` when the read itself fails.
bool readLine(std::istream& in, std::string& line, bool* too_long, const std::string& path,
              std::size_t max_bytes = kMaxLineBytes);

}  // namespace kvscope::InputFile
