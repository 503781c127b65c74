#pragma once
// Folds request_done events (and run_started's workload facts) into LabMetrics. Bounded: latencies
// are LatencySamples, turns past LabMetrics::kMaxTurnIndex share one bucket, workers are the run's.
#include <array>
#include <map>
#include <vector>

#include <absl/container/flat_hash_map.h>

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
  void observeShape(const RequestDone& d, SimTime fired, SimTime end);

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
  // The workload's shape.
  struct SessionSeen {
    std::int32_t last_turn = 0;
    SimTime last_end = -1;
  };
  // Inter-turn gaps are sampled from the first sessions seen; a live cluster for days stays bounded.
  static constexpr std::size_t kMaxSessionsTracked = 1U << 15;
  absl::flat_hash_map<SessionId, SessionSeen> sessions_;
  long requests_ = 0, long_inputs_ = 0, first_turns_ = 0, second_turns_ = 0;
  LatencySample inputs_, outputs_, inter_turn_;
  std::int64_t reuse_intra_ = 0, reuse_any_ = 0;
};

}  // namespace kvscope
