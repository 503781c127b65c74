#pragma once
// An operator's notes on a recorded run: a time and a text each ("D2 went cold here"), kept beside
// the recording as RUN.kvrec.notes.json, so that a read-only recording (a colleague's, a sweep's)
// takes notes as well and the recording itself never changes. The console adds them at the cursor,
// lists them, draws them on every time view and jumps to them; `export` writes them as Perfetto
// instant events and JSON lines.
//
//   {"notes": [{"time_s": 812.0, "text": "D2 cold from here"}, ...]}
#include <string>
#include <vector>

#include "core/model/Ids.h"

namespace kvscope {

struct RunNote {
  SimTime time = 0;
  std::string text;
  bool operator==(const RunNote&) const = default;
};

class RunNotes {
 public:
  static constexpr std::size_t kMaxText = 4096;  // bytes of one note
  static constexpr std::size_t kMaxNotes = 100'000;

  // The notes file of a recording: RECORDING.notes.json.
  static std::string pathFor(const std::string& recording);
  // The notes beside `recording`: none when there is no notes file; InputError naming the file, line
  // and field when there is one that is not valid.
  static RunNotes loadFor(const std::string& recording);
  static RunNotes parse(const std::string& text, const std::string& path);

  // Keeps the notes in time order (a note at the same time as others goes after them). False, with
  // `error`, for an empty or overlong text, a time < 0 or too many notes.
  bool add(RunNote note, std::string* error);
  bool remove(std::size_t index);
  const std::vector<RunNote>& notes() const { return notes_; }
  bool empty() const { return notes_.empty(); }

  std::string text() const;  // the file's content
  // Written whole or not at all (AtomicFile) to pathFor(recording).
  bool saveFor(const std::string& recording, std::string* error) const;

 private:
  std::vector<RunNote> notes_;
};

}  // namespace kvscope
