#pragma once
// Writes a whole file or nothing: the text goes to a hidden temporary beside the target, is flushed
// to disk, then renamed over it, so an interrupted writer never leaves a half-file under the real name.
#include <string>

namespace kvscope {

class AtomicFile {
 public:
  // False with `error` naming the file when any step fails (the temporary is removed).
  static bool write(const std::string& path, const std::string& content, std::string* error);
  // The temporary a writer of `path` uses: DIR/.NAME.partial (hidden, never taken for a result).
  static std::string partialPath(const std::string& path);
};

}  // namespace kvscope
