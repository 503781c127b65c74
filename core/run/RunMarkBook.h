#pragma once
// A live session's marked runs (Control.MarkRun and `kvscope-cli mark`): checks a
// marker before it reaches the stream, numbers the runs and knows which one is open. The lab's sweep
// scripts restart the cluster with new flags; a script that died mid-run and starts the next one
// must not be refused, so a start while a run is open ends that run first (both markers go into the
// stream, the end first). An end names the open run or no run at all.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/events/Event.h"

namespace kvscope {

inline constexpr std::size_t kMaxRunNameBytes = 128;
inline constexpr std::size_t kMaxRunParameters = 32;
inline constexpr std::size_t kMaxRunParameterNameBytes = 64;
inline constexpr std::size_t kMaxRunParameterValueBytes = 256;
// Who ends a run the session's stop (or the stream's end) cut short.
inline constexpr const char* kRunEndedBySession = "session end";

// Letters, digits, '_', '-', '.': what a parameter name may hold and what a run's file name keeps.
bool isRunNameChar(char c);
// The end marker of a run: its start's index, name and parameters, with who ended it.
RunMarked runEnd(const RunMarked& start, ChangeAuthor author);

struct RunMarkRequest {
  RunMarkAction action = RunMarkAction::Start;
  std::string name;  // required for a start; an end may leave it empty ("whatever is open")
  std::vector<std::pair<std::string, std::string>> parameters;  // a start's only
  std::string who;
  ChangeOrigin origin;  // a remote request's address and admission, as the server saw them
};

struct RunMarkResult {
  std::vector<RunMarked> marks;     // what entered the stream, in order
  std::string error;                // why nothing did; empty on success
  bool preconditionFailed = false;  // the request was well formed but the session's state refused it
};

class RunMarkBook {
 public:
  // The first problem with a request, naming its field ("parameters[2].name: ..."), or "".
  static std::string validate(const RunMarkRequest& request);

  // The markers a request adds (not yet in any stream: the caller publishes them in order).
  RunMarkResult mark(RunMarkRequest request);
  // The end marker for a run still open when the session stops.
  std::optional<RunMarked> closeOpen(ChangeAuthor author);

  const std::optional<RunMarked>& open() const { return open_; }

 private:
  std::optional<RunMarked> open_;
  std::uint32_t next_index_ = 1;
};

}  // namespace kvscope
