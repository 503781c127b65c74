#pragma once
// Reads a .kvrec recording back as core events: the header's run metadata, every event in order,
// and what was wrong with the file (a truncated tail after a crash, corrupt frames skipped).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/events/Event.h"

namespace kvscope {

class KvrecReader;
namespace v1 {
class Event;
}

struct RecordingDamage {
  std::vector<std::string> problems;  // one line each, with byte offsets (and seq when known)
  std::uint64_t frames = 0;
  std::uint64_t skipped_bytes = 0;
  bool truncated = false;
  bool index_rebuilt = false;
};

class RecordingPlayer {
 public:
  // Throws InputError naming the file when it cannot be opened as a recording.
  explicit RecordingPlayer(const std::string& path);
  ~RecordingPlayer();

  const RunStarted& run() const { return run_; }
  // Feeds every event from the current position to `sink`; returns how many. Frames that do not
  // decode are skipped and reported in damage().
  std::uint64_t play(EventSink& sink);
  // The next event from the current position (skipping, as play() does, frames that do not
  // decode); false at the end.
  bool next(Event& out);
  // From then on next() and play() decode only events of these kinds (eventKindName: "route",
  // "request_done", ...) and pass over the others undecoded: a reader that wants a few kinds of a
  // large recording (RecordingWorkload) does not pay for the rest. Throws std::invalid_argument on
  // a name that is no kind.
  void onlyKinds(const std::vector<std::string>& kinds);
  // Positions at the last keyframe at or before `time` (the first frame when none).
  void seek(SimTime time);
  SimTime firstTime() const;
  SimTime lastTime() const;
  RecordingDamage damage() const;

 private:
  std::string path_;
  std::unique_ptr<KvrecReader> reader_;
  RunStarted run_;
  std::vector<std::string> decode_problems_;
  std::unique_ptr<v1::Event> scratch_;  // reused by next(): its buffers stay allocated
  std::vector<int> only_fields_;        // onlyKinds(): the payload field numbers kept (empty: all)
};

}  // namespace kvscope
