#pragma once
// `serve --runs DIR`: one recording and one summary per marked run of a live session.
// It sits on the session's stream, splits it with MarkedRunSplitter and, per run, writes
//   DIR/NNN-<slug>.kvrec   the run's own stream (seq from 0, RunStarted naming the run), replayable
//   DIR/NNN-<slug>.json    the run's RunSummary plus a "run" object (index, name, parameters, ...)
//   DIR/runs.json          every completed run so far, in order, rewritten after each run
// No half-file ever carries a final name: the recording grows under a hidden .partial name and is
// renamed when its run ends; the JSON files are written whole (AtomicFile).
//
// The stream thread (the router's, under its lock) only appends buffered frames; a run's end -
// closing its recording, the renames and the fsync'ed JSON writes - happens on a writer thread of
// its own so a Route call never waits on the disk.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/recording/EventRecorder.h"
#include "core/run/MarkedRunSplitter.h"

namespace kvscope {

// What a finished run left behind, for the caller's log line.
struct RecordedRun {
  MarkedRun run;
  std::string recording;  // full paths
  std::string summary;
  std::string error;  // the first write that failed; empty when both files are in place
};

class MarkedRunRecorder : public EventSink {
 public:
  using Completed = std::function<void(const RecordedRun&)>;

  // Creates `dir` when missing and checks it takes files; throws InputError naming it otherwise, or
  // when it already holds an earlier session's runs (their numbers would be overwritten). What a
  // killed session left under hidden .partial names is kept as recovered-STEM-N.kvrec (recovered()).
  // `completed` runs on the writer thread once a run's files are in place (or failed).
  explicit MarkedRunRecorder(std::string dir, Completed completed = {});
  ~MarkedRunRecorder() override;  // close()

  // The session's stream, in order, from one thread.
  void onEvent(const Event& e) override;
  void flush() override;  // the open run's recording
  // Ends a run still open (as the session's end would), waits until every run's files are written.
  // False with the first error. Idempotent.
  bool close(std::string* error);

  // The files kept from a killed session at construction (full paths), for the caller's log.
  const std::vector<std::string>& recovered() const { return recovered_; }

  // "007-k200-flags": the index zero-padded, the name reduced to [A-Za-z0-9._-] (others '-'), capped.
  static std::string fileStem(std::uint32_t index, const std::string& name);

 private:
  struct Finished {
    std::unique_ptr<EventRecorder> recorder;
    MarkedRun run;
  };
  EventSink* opened(const RunMarked& start);
  void closed(const MarkedRun& run);
  void writerLoop();
  RecordedRun finish(Finished& f);  // the writer thread's part

  std::string dir_;
  Completed completed_;
  std::vector<std::string> recovered_;
  MarkedRunSplitter splitter_;
  std::unique_ptr<EventRecorder> open_;  // the open run's recording
  std::uint64_t last_seq_ = 0;           // where a close() that ends an open run puts its end
  SimTime last_time_ = 0;

  std::mutex mutex_;  // guards the queue, stop_ and error_
  std::condition_variable wake_;
  std::deque<Finished> queue_;
  bool stop_ = false;
  std::string error_;
  nlohmann::json runs_ = nlohmann::json::array();  // the writer thread's: runs.json's content
  std::thread writer_;
};

}  // namespace kvscope
