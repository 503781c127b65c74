#pragma once
// Folds request_done events (and run_started's workload facts) into LabMetrics. Bounded: latencies
// are LatencySamples, turns past LabMetrics::kMaxTurnIndex share one bucket, workers are the run's.
#include <array>
#include <map>
#include <vector>

#include "core/events/Event.h"
#include "core/metrics/LabMetrics.h"
#include "core/stats/LatencySample.h"

namespace kvscope {

class LabMetricsCollector : public EventSink {
 public:
  void onEvent(const Event& e) override;
  LabMetrics metrics() const;
  std::size_t memoryBytes() const;

 private:
  struct Tokens {
    std::int64_t prompt = 0, cached = 0;
  };
  struct ClassSamples {
    long count = 0;
    LatencySample ttft, e2e;
  };
  struct PerWorker {
    LatencySample ttft;
    long completed = 0;
  };
  PerWorker& worker(WorkerId w);

  std::int64_t offered_ = 0;
  double trace_window_s_ = 0;
  std::int64_t prompt_ = 0, cached_ = 0, ceiling_intra_ = 0, ceiling_any_ = 0, known_ = 0;
  std::int64_t input_done_ = 0, output_done_ = 0;
  long completed_ = 0;
  bool any_fired_ = false;
  SimTime first_fired_ = 0, last_end_ = 0;
  LatencySample tpot_, uncached_, slip_;
  std::map<int, Tokens> by_turn_;
  std::vector<PerWorker> workers_;
  std::array<ClassSamples, 3> classes_;  // WARM, MEDIUM, HEAVY
};

}  // namespace kvscope
