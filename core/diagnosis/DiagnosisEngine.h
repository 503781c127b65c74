#pragma once
// Names the lab's failure modes (ARCHITECTURE.md D6) from the event stream alone, so it works the
// same on a simulation, a recording and a real cluster's events. Each finding carries its time
// window, the numbers that show it, and the mitigation knob and real fix from the taxonomy.
// Thresholds are the cheat sheet's symptoms made numeric; a healthy run produces no finding.
// Bounded at any run length: aggregates, sketches and small capped lists, never one entry per
// request or per session, so the console can feed it from a live cluster for days.
//
// Worker health comes first: a worker that is down, degraded or unreachable is its own finding (H)
// and never a cold D, whose load it could not have taken. Every kBucketS of stream time the engine
// checks what holds; a finding that held at a check and no longer does stays listed as resolved,
// with the time it stopped. No window ends after the last event seen.
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnosis/Finding.h"
#include "core/events/Event.h"
#include "core/stats/DistinctCount.h"
#include "core/stats/LatencySample.h"

namespace kvscope {

class DiagnosisEngine : public EventSink {
 public:
  void onEvent(const Event& e) override;
  std::vector<Finding> findings() const;
  std::size_t memoryBytes() const;

 private:
  struct Bucket {
    long done = 0, failed = 0, transfer_errors = 0;
  };
  struct Fix {
    double t;
    WorkerId worker;
    std::int64_t fill, prefix;
  };
  // An invariant crash (AssertionError) with the correction that preceded it on its worker, if any.
  struct Crash {
    double t;
    WorkerId worker;
    std::string reason;
    std::optional<Fix> fix;
  };

  // A worker's health as the stream told it (by name: prefill workers have no WorkerId).
  struct Health {
    WorkerHealth health = WorkerHealth::Ok;
    bool down = false;       // crashed, or its snapshots say it is not alive
    std::string reason;      // why, while unhealthy
    double since = -1;       // unhealthy since (-1: healthy now)
    double unhealthy_s = 0;  // its unhealthy spells that ended, summed
  };
  // A finding that held at a check, and when it was first missing at one (-1: still holding).
  struct Seen {
    Finding finding;
    double resolved_at = -1;
  };

  void setHealth(double t, const std::string& worker, std::optional<WorkerHealth> health, std::optional<bool> down,
                 const std::string& reason);
  // Unhealthy now, or for over a quarter of the time since `from` (spells before it count too).
  bool unhealthySince(WorkerId w, double from) const;
  std::optional<Finding> workerHealth() const;
  std::vector<Finding> current() const;
  void check();
  void onCrash(double t, const WorkerCrashed& c);
  // onEvent() for the event kinds that take more than a line or two.
  void onRunStarted(const RunStarted& r);
  void onEviction(double t, const Eviction& ev);
  void onRequestDone(double t, const RequestDone& d);
  void onSnapshot(double t, const Snapshot& s);
  std::optional<Finding> cascade() const;
  std::optional<Finding> coldDecode() const;
  std::optional<Finding> coldDecodeByLoad() const;
  Finding coldFinding(std::vector<std::string> subjects, double start_s, std::string evidence) const;
  void addLoad(double t, const Snapshot& s);
  std::optional<Finding> evictStorm() const;
  std::optional<Finding> reseedStorm() const;
  std::vector<Finding> invariantCrash() const;
  std::string name(WorkerId w) const;

  static constexpr double kBucketS = 10;
  static constexpr std::size_t kMaxCrashFindings = 100;  // one finding each; later ones only counted
  static constexpr double kFixBeforeCrashS = 1.0;        // a correction this close before a crash caused it
  static constexpr double kUnhealthyShare = 0.25;
  std::vector<std::string> names_;
  std::map<std::string, Health> health_;
  std::vector<bool> alive_;  // by WorkerId, as the last snapshot said (only changes are passed on)
  std::vector<Seen> seen_;   // modes A, B, C, C' and H; D is listed per crash for good anyway
  double next_check_ = kBucketS;
  std::vector<long> bindings_;
  std::vector<bool> decode_;  // by serving WorkerId: a decode worker (cold-D concerns them only)
  // Without routing decisions (a live cluster without our router, an import of logs) the workers'
  // own running-request gauges say where the load went: by WorkerId, the running requests summed
  // over the busy snapshots the worker was up in, and the cluster's total in those same snapshots.
  std::vector<double> running_sum_, cluster_running_sum_;
  std::vector<long> busy_snapshots_;
  double first_busy_ = -1;
  std::vector<Bucket> by_arrival_;  // failures bucketed by the request's arrival time
  std::vector<Bucket> by_end_;      // ... and by the time it ended
  long dead_ = 0, dead_aborted_ = 0;
  long ok_requests_ = 0;  // none in a log import: the logs name only the requests that failed
  double first_dead_ = 0, last_dead_ = 0;
  std::map<WorkerId, int> dead_per_worker_;
  std::map<std::pair<std::int32_t, WorkerId>, int> dead_per_link_;
  std::map<WorkerId, long> session_evictions_per_worker_;
  std::vector<Crash> crashes_;  // at most kMaxCrashFindings
  long crashes_not_listed_ = 0;
  std::deque<Fix> recent_corrections_;  // the last kFixBeforeCrashS seconds
  LatencySample ttft_;
  long evictions_ = 0, session_evictions_ = 0;
  long long eviction_tokens_ = 0;
  double first_eviction_ = -1, last_eviction_ = 0;
  DistinctCount evicted_sessions_;
  long reseeds_ = 0, seeds_early_ = 0;
  double first_arrival_ = -1, end_ = 0;
  int peak_pending_seeds_early_ = 0, peak_link_queue_early_ = 0;
};

}  // namespace kvscope
