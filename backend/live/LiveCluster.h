#pragma once
// The live cluster's event stream (ARCHITECTURE.md "The live cluster"): every live adapter (metrics scrapers,
// log tailers, later the Router service) posts here from its own thread; this object gives each
// event its sequence number and wall time since the session started, and hands it to the sinks
// (TelemetryHub, recorder, metrics) one at a time, so they see one ordered stream as they do from
// a simulation. It also keeps each worker's newest gauges and folds them into periodic Snapshots,
// and each worker's health as the adapters last saw it (reachable, degraded, unreachable + why).
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/live/SchedulerLogParser.h"

namespace kvscope {

struct LiveWorkerStatus {
  std::string name;
  WorkerHealth health = WorkerHealth::Unknown;
  std::string reason;  // why degraded or unreachable ("" when ok)
  long scrapes = 0, failed_scrapes = 0;
};

class LiveCluster {
 public:
  // Run time now, in microseconds since start(). A live session runs on the steady clock; an
  // import of old logs runs on the logs' own clock (LogImporter sets it before each post).
  using Clock = std::function<SimTime()>;

  // `run` describes the cluster (workers, prefill); its scenario names the session.
  LiveCluster(RunStarted run, std::vector<EventSink*> sinks);
  LiveCluster(RunStarted run, std::vector<EventSink*> sinks, Clock clock);

  void start();  // emits RunStarted; call once, before any post()
  // Emits a last Snapshot and RunFinished, with what the adapters could not use (`notes`).
  void finish(bool completed, std::vector<std::string> notes = {});

  // Any thread. Events after finish() are dropped. Returns the event's sequence number (0 when dropped).
  std::uint64_t post(EventPayload payload);
  void post(std::vector<EventPayload> payloads);

  // A serving worker's gauges from its /metrics (replaces what the previous scrape said).
  // `asked_at` is when the scrape began (now() then): an answer to a request sent after the
  // worker's crash means it runs again (WorkerRestarted); one sent before proves nothing.
  void setGauges(const WorkerGauges& gauges, SimTime asked_at);
  // A serving worker's load from a batch log line (only the fields the line carries). A batch line
  // after the worker's crash means it runs again (WorkerRestarted).
  void setBatchGauges(WorkerId worker, const BatchGauges& batch);
  // How many requests the router forgot unreported on `worker` so far, and how many still await
  // their report (the router knows, /metrics does not): carried in every Snapshot from now on.
  void setUnreported(WorkerId worker, std::int64_t expired, std::int64_t awaiting);
  // The blocks a serving worker's engine holds per its KV events; with `set_kv_used` (a worker watched
  // by its events alone: /metrics, when scraped, speaks for it instead) also its KV use, `tokens`.
  // `stored`, `removed`: the GPU-tier blocks its events stored and removed so far.
  void setKvEventBlocks(WorkerId worker, std::int64_t blocks, std::int64_t tokens, std::int64_t stored,
                        std::int64_t removed, bool set_kv_used);
  // The health a scraper saw for a worker (any role), by the index in `workerNames()`.
  void setHealth(std::size_t index, WorkerHealth health, std::string reason);
  // Emits a Snapshot of every serving worker's newest gauges. A worker whose load comes from batch
  // lines alone and has printed none for kBatchQuietS is idle: SGLang prints a decode line every
  // decode_log_interval (40) iterations while it runs, and nothing when it has no batch.
  void snapshot();  // also flush()
  // Ends a batch: every sink's flush() (a recording writes out what it buffered).
  void flush();
  static constexpr SimTime kBatchQuietS = 10;

  SimTime now() const;
  std::vector<LiveWorkerStatus> statuses() const;
  const RunStarted& run() const { return run_; }
  // Serving workers first, then prefill workers: the index setHealth() takes.
  std::vector<std::string> workerNames() const;
  std::uint64_t events() const;

 private:
  std::uint64_t emitLocked(EventPayload payload);

  RunStarted run_;
  std::vector<EventSink*> sinks_;
  std::chrono::steady_clock::time_point t0_;
  Clock clock_;  // empty: the steady clock since t0_
  mutable std::mutex mutex_;
  std::uint64_t seq_ = 0;
  SimTime last_time_ = 0;
  bool started_ = false, finished_ = false;
  std::vector<WorkerGauges> gauges_;    // by serving WorkerId
  std::vector<SimTime> crashed_at_;     // by serving WorkerId; -1 = up
  std::vector<SimTime> last_batch_at_;  // by serving WorkerId: the newest batch line; -1 = none since a scrape
  std::vector<LiveWorkerStatus> status_;
};

}  // namespace kvscope
