#pragma once
// A recording served as a run (`kvscope-cli serve --replay`): a thread publishes the recording's
// events to the sinks paced at N x the recorded time, with pause, resume, speed and seek. Knob and
// policy changes are refused: a recording cannot change what happened.
//
// The published stream numbers its events itself (0, 1, 2, ... in publishing order; each event keeps
// its recorded time), so jumping back never makes a sequence number go down, and the telemetry
// hub's Subscribe(from_seq) keeps its meaning. The stream opens with RunStarted from the
// recording's header. After a seek to T it restates the run up to T, unpaced, so a client can
// rebuild its view as it stood at T: RunStarted (the header's), every recorded event before T,
// then RunControlChanged{Seek}; then the recorded events from T on, paced again.
// Recorded RunStarted frames are not published again (the header holds the same metadata).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "backend/recording/RecordingPlayer.h"
#include "core/events/Event.h"
#include "core/run/RunControl.h"

namespace kvscope {

class RecordingReplay : public RunControl {
 public:
  // Opens the recording and scans it once (for damage and the end time). Throws InputError naming
  // the file when it cannot be read as a recording. `sinks` are called on the replay's thread and
  // must hand data off quickly.
  RecordingReplay(const std::string& path, std::vector<EventSink*> sinks);
  ~RecordingReplay() override;  // stops and joins

  // Starts publishing; `speed` as in setSpeed(). Control calls made before take effect at the start.
  void start(double speed = 10);
  void stop();  // the thread ends after the event it is publishing; the stream just stops

  const RunStarted& run() const { return player_->run(); }   // from the header
  const RecordingDamage& damage() const { return damage_; }  // what the scan at open found
  bool atEnd() const { return at_end_.load(); }              // every event published (until a seek back)

  bool canChangeKnobs() const override { return false; }
  void applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                  std::function<void(KnobRegistry::Result)> done) override;
  void setPolicy(std::string name, ChangeAuthor author, Done done) override;

  void pause(ChangeAuthor author) override;  // returns once the thread stands still between events
  void resume(ChangeAuthor author) override;
  void setSpeed(double speed, ChangeAuthor author) override;  // x the recorded time; 0 = as fast as possible

  bool canSeek() const override { return true; }
  // Returns once the restated run is published (false with `error` outside [0, endTime()]).
  bool seek(SimTime time, ChangeAuthor author, std::string* error) override;
  SimTime endTime() const override { return end_; }

  bool paused() const override { return paused_.load(); }
  double speed() const override { return speed_.load(); }
  SimTime simTime() const override { return position_.load(); }

 private:
  void scan(const std::string& path);
  void loop();
  // Queues a control change for the thread (mutex held); returns its ticket.
  std::uint64_t enqueue(RunAction action, SimTime target, ChangeAuthor author);
  void apply(RunControlChanged change);  // thread: publish it, seeking first for a Seek
  // Thread: publishes RunStarted and every event before `time`, then positions the player at the
  // first event at or after it.
  void restate(SimTime time);
  // Thread: publishes the pending events due by `due` (a bounded slice of them); true at the end.
  bool publishDue(SimTime due);
  void publish(Event e);
  void advance();

  std::unique_ptr<RecordingPlayer> player_;  // the thread's once started
  std::vector<EventSink*> sinks_;
  RecordingDamage damage_;
  SimTime end_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<RunControlChanged> commands_;
  std::uint64_t queued_ = 0, done_ = 0;  // control changes queued and applied, for the waits
  bool started_ = false;
  bool stop_requested_ = false;
  bool pause_requested_ = false;
  bool reanchor_ = true;
  bool exited_ = false;
  std::atomic<bool> paused_{false};
  std::atomic<bool> at_end_{false};
  std::atomic<double> speed_{10};
  std::atomic<SimTime> position_{0};

  // The thread's own state.
  std::optional<Event> pending_;  // the next recorded event to publish
  std::uint64_t next_seq_ = 0;
  std::chrono::steady_clock::time_point wall_anchor_;
  SimTime sim_anchor_ = 0;
  std::thread thread_;  // last: started once everything it reads exists
};

}  // namespace kvscope
