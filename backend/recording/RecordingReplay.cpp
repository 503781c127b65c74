#include "backend/recording/RecordingReplay.h"

#include <algorithm>
#include <limits>

#include "backend/recording/KvrecReader.h"
#include "core/model/Error.h"

namespace kvscope {

namespace {

using Clock = std::chrono::steady_clock;

// At most this much wall time (or this many events) per slice of publishing, so control calls and
// stop() are looked at often even at full speed.
constexpr auto kSlice = std::chrono::milliseconds(10);
constexpr int kSliceEvents = 256;
// Paced and idle: wake at least this often (new due events are computed from the wall clock).
constexpr auto kMaxIdle = std::chrono::milliseconds(50);

}  // namespace

RecordingReplay::RecordingReplay(const std::string& path, std::vector<EventSink*> sinks)
    : player_(std::make_unique<RecordingPlayer>(path)), sinks_(std::move(sinks)) {
  scan(path);
}

RecordingReplay::~RecordingReplay() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void RecordingReplay::scan(const std::string& path) {
  std::string error;
  auto reader = KvrecReader::open(path, &error);
  if (!reader) throw InputError(error);  // RecordingPlayer opened it a moment ago: changed on disk
  KvrecFrame frame;
  while (reader->next(frame)) {}  // reading it all is what finds the damage
  for (const auto& p : reader->problems()) damage_.problems.push_back(p.message);
  const auto stats = reader->stats();
  damage_.frames = stats.frames;
  damage_.skipped_bytes = stats.skipped_bytes;
  damage_.truncated = stats.truncated;
  damage_.index_rebuilt = stats.index_rebuilt;
  end_ = std::max<SimTime>(0, reader->lastTime());
}

void RecordingReplay::start(double speed) {
  {
    std::lock_guard lock(mutex_);
    if (started_) return;
    started_ = true;
    speed_ = speed;
  }
  thread_ = std::thread([this] { loop(); });
}

void RecordingReplay::stop() {
  std::lock_guard lock(mutex_);
  stop_requested_ = true;
  wake_.notify_all();
}

void RecordingReplay::applyKnobs(std::map<std::string, double>, ChangeAuthor,
                                 std::function<void(KnobRegistry::Result)> done) {
  KnobRegistry::Result refused;
  refused.ok = false;
  refused.error = "a replayed recording cannot change its knobs (it shows what happened)";
  done(std::move(refused));
}

void RecordingReplay::setPolicy(std::string, ChangeAuthor, Done done) {
  done({false, "a replayed recording cannot change its policy (it shows what happened)", {}});
}

std::uint64_t RecordingReplay::enqueue(RunAction action, SimTime target, ChangeAuthor author) {
  commands_.push_back(
      RunControlChanged{action, speed_.load(), target, std::move(author.who), std::move(author.origin)});
  wake_.notify_all();
  return ++queued_;
}

void RecordingReplay::pause(ChangeAuthor author) {
  std::unique_lock lock(mutex_);
  if (!pause_requested_) enqueue(RunAction::Paused, 0, std::move(author));
  pause_requested_ = true;
  if (!started_) return;
  // Paused only counts once the Paused event is out and the thread waits.
  wake_.wait(lock, [&] { return (paused_.load() && done_ == queued_) || exited_; });
}

void RecordingReplay::resume(ChangeAuthor author) {
  std::lock_guard lock(mutex_);
  if (!pause_requested_) return;
  pause_requested_ = false;
  reanchor_ = true;
  enqueue(RunAction::Resumed, 0, std::move(author));
}

void RecordingReplay::setSpeed(double speed, ChangeAuthor author) {
  std::lock_guard lock(mutex_);
  if (speed == speed_.load()) return;
  speed_ = speed;
  reanchor_ = true;
  enqueue(RunAction::Speed, 0, std::move(author));
}

bool RecordingReplay::seek(SimTime time, ChangeAuthor author, std::string* error) {
  if (time < 0 || time > end_) {
    if (error)
      *error = "time " + std::to_string(time) + " us is outside the recording [0, " + std::to_string(end_) + "] us";
    return false;
  }
  std::unique_lock lock(mutex_);
  if (stop_requested_ || exited_) {
    if (error) *error = "the replay has stopped";
    return false;
  }
  const std::uint64_t ticket = enqueue(RunAction::Seek, time, std::move(author));
  if (started_) wake_.wait(lock, [&] { return done_ >= ticket || exited_; });
  return true;
}

void RecordingReplay::loop() {
  restate(0);  // the stream opens with the header's RunStarted
  std::unique_lock lock(mutex_);
  while (!stop_requested_) {
    if (!commands_.empty()) {
      RunControlChanged change = std::move(commands_.front());
      commands_.pop_front();
      if (change.action == RunAction::Seek) reanchor_ = true;  // the pace restarts from the target
      lock.unlock();
      apply(std::move(change));
      lock.lock();
      ++done_;
      wake_.notify_all();
      continue;
    }
    if (pause_requested_ || at_end_.load()) {
      paused_ = pause_requested_;
      wake_.notify_all();
      wake_.wait(lock, [&] { return stop_requested_ || !commands_.empty() || (!pause_requested_ && !at_end_.load()); });
      continue;
    }
    paused_ = false;
    if (reanchor_) {
      wall_anchor_ = Clock::now();
      sim_anchor_ = position_.load();
      reanchor_ = false;
    }
    const double speed = speed_.load();
    lock.unlock();
    SimTime due = std::numeric_limits<SimTime>::max();
    if (speed > 0)
      due = sim_anchor_ + secondsToTime(std::chrono::duration<double>(Clock::now() - wall_anchor_).count() * speed);
    const bool end = publishDue(due);
    lock.lock();
    if (end) {
      at_end_ = true;
      position_ = end_;
    } else if (speed > 0) {
      position_ = std::min(due, end_);
      // Sleep until the next event is due (or a control call comes in).
      const double wall_s = timeToSeconds(pending_->time - due) / speed;
      const auto wait = std::clamp(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wall_s)),
                                   Clock::duration::zero(), Clock::duration(kMaxIdle));
      wake_.wait_for(lock, wait, [&] { return stop_requested_ || !commands_.empty() || pause_requested_; });
    }
  }
  paused_ = false;
  exited_ = true;
  wake_.notify_all();
}

void RecordingReplay::apply(RunControlChanged change) {
  if (change.action == RunAction::Seek) {
    restate(change.target);
    position_ = change.target;
  }
  const SimTime at = change.action == RunAction::Seek ? change.target : position_.load();
  publish(Event{0, at, std::move(change)});
}

void RecordingReplay::restate(SimTime time) {
  // The run from its start up to `time`, unpaced: the header's RunStarted, then every recorded event
  // before `time` (its knob changes among them). A client that starts over on RunStarted so rebuilds
  // its charts, timeline, tables and diagnosis exactly as they stood at `time`: a seek never drops
  // what came before it. It costs one read of the recording up to `time`.
  player_->seek(std::numeric_limits<SimTime>::min());
  pending_.reset();
  publish(Event{0, 0, player_->run()});
  Event e;
  while (player_->next(e)) {
    if (std::holds_alternative<RunStarted>(e.payload)) continue;  // the header's stands for it
    if (e.time >= time) {
      pending_ = std::move(e);
      break;
    }
    publish(std::move(e));
  }
  at_end_ = !pending_;
}

bool RecordingReplay::publishDue(SimTime due) {
  const auto slice_end = Clock::now() + kSlice;
  int n = 0;
  while (pending_ && pending_->time <= due) {
    const SimTime time = pending_->time;
    publish(std::move(*pending_));
    advance();
    if (due == std::numeric_limits<SimTime>::max()) position_ = time;  // unpaced: where it got to
    if (++n % kSliceEvents == 0 && Clock::now() >= slice_end) break;
  }
  return !pending_;
}

void RecordingReplay::advance() {
  Event e;
  pending_.reset();
  while (player_->next(e)) {
    if (std::holds_alternative<RunStarted>(e.payload)) continue;  // published from the header instead
    pending_ = std::move(e);
    return;
  }
}

void RecordingReplay::publish(Event e) {
  e.seq = next_seq_++;
  for (EventSink* s : sinks_) s->onEvent(e);
}

}  // namespace kvscope
