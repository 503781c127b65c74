#pragma once
// Folds the event stream into a RunSummary. Holds per-request latencies (two doubles each) and
// per-worker counters; nothing proportional to the number of blocks or events.
#include <set>
#include <vector>

#include "events/Event.h"
#include "metrics/RunSummary.h"

namespace kvscope {

class SummaryCollector : public EventSink {
 public:
  void onEvent(const Event& e) override;
  // The summary so far (diagnosis is filled in by the caller).
  RunSummary summary() const;

 private:
  struct PerWorker {
    WorkerInfo info;
    long bindings = 0;
    std::set<SessionId> sessions;
    double kv_peak_frac = 0;
    long evictions = 0;
    long long tokens_served = 0;
  };
  PerWorker& worker(WorkerId w);

  RunStarted run_;
  std::vector<PerWorker> workers_;
  std::vector<double> e2e_, ttft_;
  long total_ = 0, failed_ = 0;
  long evictions_ = 0;
  long long eviction_tokens_ = 0, eviction_max_ = 0;
  std::set<SessionId> evicted_sessions_;
  long seeds_ = 0, reseeds_ = 0, direct_ = 0, link_dead_ = 0, aborted_ = 0, crashes_ = 0, corrections_ = 0;
  SimTime last_time_ = 0;
};

}  // namespace kvscope
