#pragma once
// Runs a ClusterSimulator on its own thread: as fast as possible or paced at N x real time,
// pausable and steppable, with knob and policy changes queued from any thread and applied between
// events (so they take effect on the next decision and appear in the event stream). Pause, resume
// and speed changes appear in the stream too, as RunControlChanged events.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/run/RunControl.h"
#include "core/sim/ClusterSimulator.h"

namespace kvscope {

class SimulationRunner : public RunControl {
 public:
  // `sinks` are called on the simulation thread; they must hand data off quickly (staging buffer).
  SimulationRunner(Scenario scenario, Workload workload, std::vector<EventSink*> sinks);
  ~SimulationRunner();  // stops and joins

  void start(double speed = 0);              // 0 = as fast as possible
  void pause(ChangeAuthor author) override;  // returns once the simulation thread has stopped between events
  void resume(ChangeAuthor author) override;
  void step();                                                // while paused: process exactly one event
  void setSpeed(double speed, ChangeAuthor author) override;  // 0 = as fast as possible
  void stop();                                                // ends the run early (RunFinished{completed=false})
  void waitFinished();

  bool paused() const override { return paused_.load(); }
  bool finished() const { return finished_.load(); }
  SimTime simTime() const override { return sim_time_.load(); }
  double speed() const override { return speed_.load(); }
  SimTime endTime() const override { return end_time_; }
  bool canSeek() const override { return false; }
  bool seek(SimTime, ChangeAuthor author, std::string* error) override;
  bool canChangeKnobs() const override { return true; }

  // Runs `fn` on the simulation thread between events (at once when the run is over).
  void post(std::function<void(ClusterSimulator&)> fn);
  void applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                  std::function<void(KnobRegistry::Result)> done) override;
  void setPolicy(std::string name, ChangeAuthor author, Done done) override;
  std::future<KnobRegistry::Result> applyKnobs(std::map<std::string, double> changes, ChangeAuthor author);
  std::future<bool> setPolicy(std::string name, ChangeAuthor author);

 private:
  void loop();
  void runCommands(std::unique_lock<std::mutex>& lock);
  void anchor();
  // Queues the event for the simulation thread (mutex held); dropped once the run has finished.
  void announce(RunAction action, ChangeAuthor author);

  Scenario scenario_;
  std::unique_ptr<ClusterSimulator> sim_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void(ClusterSimulator&)>> commands_;
  int steps_ = 0;
  bool stop_requested_ = false;
  bool pause_requested_ = false;
  std::atomic<bool> paused_{false};
  std::atomic<bool> finished_{false};
  std::atomic<SimTime> sim_time_{0};
  std::atomic<double> speed_{0};
  SimTime end_time_ = 0;
  bool reanchor_ = true;
  std::chrono::steady_clock::time_point wall_anchor_;
  SimTime sim_anchor_ = 0;
};

}  // namespace kvscope
