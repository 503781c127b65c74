#pragma once
// Folds the event stream into a RunSummary. Bounded at any run length: latencies and session sets
// are exact for every finite run the lab makes and become fixed-size sketches past that
// (LatencySample, DistinctCount), so the console can feed it from a live cluster for days.
#include <vector>

#include "core/events/Event.h"
#include "core/metrics/LabMetricsCollector.h"
#include "core/metrics/RunSummary.h"
#include "core/stats/DistinctCount.h"
#include "core/stats/LatencySample.h"

namespace kvscope {

class SummaryCollector : public EventSink {
 public:
  void onEvent(const Event& e) override;
  // The summary so far (diagnosis is filled in by the caller).
  RunSummary summary() const;
  std::size_t memoryBytes() const;

 private:
  struct PerWorker {
    WorkerInfo info;
    long bindings = 0;
    DistinctCount sessions;
    double kv_peak_frac = 0;
    long evictions = 0;
    long long tokens_served = 0;
    long retractions = 0;
    long long capacity_violations = 0;    // the worker's cumulative count in its latest snapshot
    std::int64_t expired_unreported = 0;  // the same, for requests the live router forgot unreported
  };
  PerWorker& worker(WorkerId w);

  RunStarted run_;
  std::vector<PerWorker> workers_;
  std::vector<std::string> source_notes_;  // RunFinished's
  LatencySample e2e_, ttft_;
  long total_ = 0, failed_ = 0;
  long evictions_ = 0;
  long long eviction_tokens_ = 0, eviction_max_ = 0;
  DistinctCount evicted_sessions_;
  long retractions_ = 0, retraction_events_ = 0;
  long seeds_ = 0, reseeds_ = 0, direct_ = 0, link_dead_ = 0, aborted_ = 0, crashes_ = 0, corrections_ = 0;
  SimTime last_time_ = 0;
  LabMetricsCollector lab_;
};

}  // namespace kvscope
