#pragma once
// Writes a whole file or nothing: the text goes to a hidden temporary beside the target, is flushed
// to disk, then renamed over it, so an interrupted writer never leaves a half-file under the real name.
//
// It is also the one place that decides what a path given as an output may be: a regular
// file, a name not taken yet, or a symlink to either (followed: the file it points to is written, the
// link stays). A directory, FIFO, device or socket is refused - a rename over /dev/null would replace
// the device system-wide, and opening a FIFO blocks until someone reads it. Every writer of a file a
// user named (exports, recordings, sweep and run directories, the console's exports) goes through here.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvscope {

class AtomicFile {
 public:
  // False with `error` naming the file when any step fails (the temporary is removed).
  static bool write(const std::string& path, const std::string& content, std::string* error);
  // Writes files that belong together (a sweep's summary.md, .csv and .json) as a set: every one is
  // written and flushed under its temporary name before the first is renamed, so a full disk or a
  // bad path leaves the previous set whole rather than one new file beside two old ones. (The
  // renames themselves need no space; only a crash between them could mix the sets.)
  static bool writeSet(const std::vector<std::pair<std::string, std::string>>& files, std::string* error);
  // The temporary a writer of `path` uses: DIR/.NAME.partial (hidden, never taken for a result).
  static std::string partialPath(const std::string& path);

  // Where a write to `path` lands: `path` itself when it is missing or a regular file, or the end of
  // its symlink chain. nullopt with `error` ("PATH: is a FIFO, not a regular file ...") otherwise.
  static std::optional<std::string> target(const std::string& path, std::string* error);
  // Renames the finished temporary `tmp` (made beside target(path)) over target(path), checking the
  // target again; removes `tmp` and returns false with `error` on failure.
  static bool moveIntoPlace(const std::string& tmp, const std::string& path, std::string* error);
  // Opens target(path) for writing, created or truncated, for a writer that writes in place (a
  // recording). Never blocks on a FIFO; fstat after the open confirms a regular file, so a node
  // swapped in after the check is refused too. The file is locked for writing (fcntl) before it is
  // truncated: a writer in another process (a second `serve --record` of the same file) is refused with the
  // holder's pid instead of interleaving into one corrupt file. -1 with `error` naming `path`.
  static int openForWrite(const std::string& path, std::string* error);
};

}  // namespace kvscope
