#pragma once
// One state per decode worker, with its cause and since when: what the console's worker strip, the
// screenshot summary and the tests read, so they cannot disagree. Worst first:
//   crashed      down now ("crashed 371.8 s")
//   unreachable  a live worker whose /metrics cannot be read ("unreachable: HTTP 503 since 12.0 s")
//   cold         alive but getting (next to) no new bindings while others do, or, once sessions
//                have all bound, empty for a whole window while the others serve (the cold-D pattern)
//   degraded     /metrics answers slowly or with errors
//   restarted    back from a crash within the window ("crashed 371.8 s, restarted 433.0 s")
//   evicting     evicted sessions within the last minute
//   quiet        no bindings in the window, but too few bindings anywhere to call it cold
//   idle         no bindings anywhere in the window
//   ok
// A crashed, unreachable, restarted or degraded worker is never "cold": its missing bindings have a
// cause already. Once cold, a worker stays cold until its share is back above twice the threshold
// (hysteresis: at 64 D the labels flickered among workers near the line). Where no
// binding was ever seen (a live cluster watched without its router), bindings judge nothing.
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/model/Ids.h"

namespace kvscope {

class TelemetryStore;
struct WorkerSeries;

enum class WorkerStateKind { Crashed, Unreachable, Cold, Degraded, Restarted, Evicting, Quiet, Idle, Ok };
const char* toString(WorkerStateKind);
// Larger is worse: the order "worst first" sorts by.
int severity(WorkerStateKind);

struct WorkerState {
  std::string worker;   // "D2"
  int store_index = 0;  // into TelemetryStore::workers()
  WorkerStateKind kind = WorkerStateKind::Ok;
  std::string cause;         // the whole line: "cold: 0 bindings since 0.8 s"
  SimTime since = -1;        // when the state began, where known
  long recent_bindings = 0;  // in the window
  double recent_share = -1;  // of the window's bindings (-1: none in the window)
};

class WorkerStateTracker {
 public:
  struct Options {
    SimTime window = secondsToTime(120);  // bindings are judged over this
    SimTime eviction_window = secondsToTime(60);
    double cold_fraction = 0.25;  // below this fraction of the fair share is cold
    long min_bindings_to_judge = 20;
  };
  WorkerStateTracker() : WorkerStateTracker(Options{}) {}
  explicit WorkerStateTracker(Options options) : options_(options) {}

  // The decode workers' states now. `health`: per worker name, SourceStatus::worker_health's text
  // ("unreachable: HTTP 503", "degraded: /metrics 2.3 s", "ok" or ""); the tracker remembers since
  // when each text holds.
  std::vector<WorkerState> update(const TelemetryStore& store, const std::map<std::string, std::string>& health = {});
  const Options& options() const { return options_; }

 private:
  Options options_;
  struct HealthSeen {
    std::string text;
    SimTime since = 0;
  };
  std::map<std::string, HealthSeen> health_seen_;
  std::set<std::string> cold_;  // the workers called cold at the last update

  // Evictions per worker in the last eviction_window, kept from the discrete events the store
  // added since the last update: rescanning the window every frame cost as much as a chart in an
  // eviction storm.
  struct EvictionWindow {
    std::uint64_t run_id = ~std::uint64_t{0};
    std::uint64_t next = 0;  // absolute index (dropped + ring position) of the next event to read
    std::deque<std::pair<SimTime, WorkerId>> held;  // in time order
    std::map<WorkerId, long> per_worker;
  };
  void advanceEvictions(const TelemetryStore& store);
  EvictionWindow evictions_;

  // What update() judges every worker against: the window's bindings (or, where no binding is
  // known, its running-request load) across the workers that could take them (WorkerStateTracker.cpp).
  struct Window;
  // The signs that a worker is cold, on its bindings or its load (WorkerStateTracker.cpp).
  struct ColdSigns;
  ColdSigns coldSigns(const WorkerState& s, const WorkerSeries& w, std::size_t k, const Window& window) const;
  // One worker's state from its series, its health text and its share of the window.
  void classify(WorkerState& s, const WorkerSeries& w, const std::string& health, std::size_t k, const Window& window);
};

}  // namespace kvscope
