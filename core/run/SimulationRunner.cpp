#include "core/run/SimulationRunner.h"

namespace kvscope {

using Clock = std::chrono::steady_clock;

SimulationRunner::SimulationRunner(Scenario scenario, Workload workload, std::vector<EventSink*> sinks)
    : scenario_(std::move(scenario)) {
  sim_ = std::make_unique<ClusterSimulator>(scenario_, std::move(workload), scenario_.seed);
  end_time_ = sim_->endTime();
  for (EventSink* s : sinks) sim_->addSink(s);
}

SimulationRunner::~SimulationRunner() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void SimulationRunner::start(double speed) {
  speed_ = speed;
  sim_->start();
  thread_ = std::thread([this] { loop(); });
}

void SimulationRunner::pause(ChangeAuthor author) {
  std::unique_lock lock(mutex_);
  if (!pause_requested_) announce(RunAction::Paused, std::move(author));
  pause_requested_ = true;
  wake_.notify_all();
  wake_.wait(lock, [&] { return paused_.load() || finished_.load(); });
}

void SimulationRunner::resume(ChangeAuthor author) {
  std::lock_guard lock(mutex_);
  if (pause_requested_) announce(RunAction::Resumed, std::move(author));
  pause_requested_ = false;
  reanchor_ = true;
  wake_.notify_all();
}

void SimulationRunner::step() {
  std::unique_lock lock(mutex_);
  if (!paused_.load() || finished_.load()) return;  // stepping only means something while paused
  ++steps_;
  wake_.notify_all();
  wake_.wait(lock, [&] { return steps_ == 0 || finished_.load(); });
}

void SimulationRunner::setSpeed(double speed, ChangeAuthor author) {
  std::lock_guard lock(mutex_);
  const bool changed = speed != speed_.load();
  speed_ = speed;
  if (changed) announce(RunAction::Speed, std::move(author));
  reanchor_ = true;
  wake_.notify_all();
}

void SimulationRunner::stop() {
  std::lock_guard lock(mutex_);
  stop_requested_ = true;
  wake_.notify_all();
}

void SimulationRunner::waitFinished() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return finished_.load(); });
}

void SimulationRunner::post(std::function<void(ClusterSimulator&)> fn) {
  std::lock_guard lock(mutex_);
  if (finished_)
    fn(*sim_);  // the simulation thread has exited: nothing else touches the simulator
  else
    commands_.push_back(std::move(fn));
  wake_.notify_all();
}

void SimulationRunner::applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                                  std::function<void(KnobRegistry::Result)> done) {
  post([changes = std::move(changes), author = std::move(author), done = std::move(done)](ClusterSimulator& sim) {
    done(sim.applyKnobs(changes, author));
  });
}

void SimulationRunner::setPolicy(std::string name, ChangeAuthor author, Done done) {
  post([name = std::move(name), author = std::move(author), done = std::move(done)](ClusterSimulator& sim) {
    done(policyResult(sim.setPolicy(name, author), name));
  });
}

std::future<KnobRegistry::Result> SimulationRunner::applyKnobs(std::map<std::string, double> changes,
                                                               ChangeAuthor author) {
  auto promise = std::make_shared<std::promise<KnobRegistry::Result>>();
  auto future = promise->get_future();
  applyKnobs(std::move(changes), std::move(author),
             [promise](KnobRegistry::Result r) { promise->set_value(std::move(r)); });
  return future;
}

std::future<bool> SimulationRunner::setPolicy(std::string name, ChangeAuthor author) {
  auto promise = std::make_shared<std::promise<bool>>();
  auto future = promise->get_future();
  setPolicy(std::move(name), std::move(author), [promise](KnobRegistry::Result r) { promise->set_value(r.ok); });
  return future;
}

void SimulationRunner::announce(RunAction action, ChangeAuthor author) {
  if (finished_) return;  // nothing runs any more: there is nothing to pause, resume or pace
  // Published by the simulation thread, between events, so it is ordered with the run's own events.
  commands_.push_back(
      [change = RunControlChanged{action, speed_.load(), 0, std::move(author.who), std::move(author.origin)}](
          ClusterSimulator& sim) { sim.publishRunControl(change); });
}

bool SimulationRunner::seek(SimTime, ChangeAuthor, std::string* error) {
  if (error) *error = "a live simulation cannot seek; seek works on recordings (serve --replay)";
  return false;
}

void SimulationRunner::runCommands(std::unique_lock<std::mutex>& lock) {
  while (!commands_.empty()) {
    auto cmd = std::move(commands_.front());
    commands_.pop_front();
    lock.unlock();
    cmd(*sim_);  // on the simulation thread, between events
    lock.lock();
  }
}

void SimulationRunner::anchor() {
  wall_anchor_ = Clock::now();
  sim_anchor_ = sim_->now();
  reanchor_ = false;
}

void SimulationRunner::loop() {
  std::unique_lock lock(mutex_);
  bool completed = true;
  while (true) {
    runCommands(lock);
    if (stop_requested_) {
      completed = false;
      break;
    }
    if (sim_->done()) break;
    if (pause_requested_) {
      paused_ = true;
      wake_.notify_all();
      if (steps_ > 0) {
        lock.unlock();
        sim_->step();
        sim_time_ = sim_->now();
        lock.lock();
        --steps_;
        wake_.notify_all();
        continue;
      }
      wake_.wait(lock, [&] { return !pause_requested_ || steps_ > 0 || stop_requested_ || !commands_.empty(); });
      continue;
    }
    paused_ = false;
    const double speed = speed_.load();
    if (reanchor_) anchor();
    lock.unlock();
    SimTime target = sim_->endTime();
    if (speed > 0) {
      const double wall = std::chrono::duration<double>(Clock::now() - wall_anchor_).count();
      target = sim_anchor_ + secondsToTime(wall * speed);
    }
    // A slice of work, then back to the lock to look at commands: at most 10 ms of wall time.
    const auto slice_end = Clock::now() + std::chrono::milliseconds(10);
    int n = 0;
    while (!sim_->done() && (speed <= 0 || sim_->now() < target)) {
      if (speed > 0 && !sim_->done()) {
        // Paced: only events due by `target`; the clock itself advances to target.
        const SimTime next = std::min(target, sim_->endTime());
        sim_->runUntil(next);
        break;
      }
      sim_->step();
      if (++n % 256 == 0 && Clock::now() >= slice_end) break;
    }
    sim_time_ = sim_->now();
    lock.lock();
    if (speed > 0 && !sim_->done() && !pause_requested_ && !stop_requested_ && commands_.empty())
      wake_.wait_for(lock, std::chrono::milliseconds(10));
  }
  lock.unlock();
  sim_->finish(completed);
  lock.lock();
  sim_time_ = sim_->now();
  finished_ = true;
  paused_ = false;
  runCommands(lock);  // anything queued while the run ended
  wake_.notify_all();
}

}  // namespace kvscope
