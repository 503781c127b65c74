#pragma once
// What RemoteSource's stream has told about the run it follows: where the stream is (the last
// sequence number seen, so that a reconnect resumes at the next one and the staging buffer never
// sees an event twice), the run's pace (time, paused, speed), which run it is and whether it
// finished, the workers' health, and what was lost on the way (events the server no longer held,
// events that did not decode). Not thread-safe: RemoteSource holds its mutex around every call.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/events/Event.h"

namespace kvscope {

namespace v1 {
class State;
}

class RemoteRunState {
 public:
  // An event from the stream; false (and nothing changes) when it repeats one already seen.
  bool apply(const Event& event);
  // Events first_seq..last_seq the server no longer held (a Gap): counted as missed, and passed.
  void gap(std::uint64_t first_seq, std::uint64_t last_seq);
  // An event that did not decode: counted (with why, the last one), and passed.
  void undecodable(std::uint64_t seq, const std::string& why);
  // The server's state before resubscribing. A server that numbers below where the stream was, or
  // runs another run, was restarted: its run is followed from its beginning. Takes its pace.
  void resync(const v1::State& state);
  void setPace(bool paused, double speed) {
    paused_ = paused;
    speed_ = speed;
  }
  void setPaused(bool paused) { paused_ = paused; }
  void setSpeed(double speed) { speed_ = speed; }

  bool hasPosition() const { return has_seq_; }
  // Where a subscription continues: after the last event seen, or the run's beginning.
  std::uint64_t resumeFrom() const { return has_seq_ ? last_seq_ + 1 : 0; }
  SimTime time() const { return time_; }
  bool paused() const { return paused_; }
  double speed() const { return speed_; }
  bool finished() const { return run_finished_; }  // RunFinished seen since the last RunStarted
  const std::map<std::string, std::string>& workerHealth() const { return worker_health_; }
  // What the status adds to its detail, in order: missed events, undecodable events, the notice
  // (entries may be empty).
  std::vector<std::string> notes() const;

 private:
  bool has_seq_ = false;
  std::uint64_t last_seq_ = 0;
  SimTime time_ = 0;
  bool paused_ = false;
  double speed_ = 0;
  bool run_finished_ = false;
  std::optional<std::pair<std::string, std::uint64_t>> run_;  // scenario and seed of the run followed
  std::map<std::string, std::string> worker_health_;          // from WorkerHealthChanged (serve --live)
  std::uint64_t missed_ = 0;
  std::uint64_t undecodable_ = 0;
  std::string undecodable_why_;
  std::string notice_;  // e.g. "the server started a new run"
};

}  // namespace kvscope
