#pragma once
// A Source for the console benchmark: a producer thread appends made-up but
// realistic events to the staging buffer at a fixed wall-clock rate, in small batches (every 2 ms by
// default), or as fast as the consumer keeps up (rate 0, with a bounded backlog).
//
// The cluster: by default 1 prefill (P0) and 8 decode workers (D0..D7; Options::decode, ::prefill) under the kv-aware
// policy. It starts with one RunStarted naming them; then per request a RouteDecision (a candidate per D with their
// score components), an Admission and, later, a RequestDone; a quarter of the requests are seeded (SeedStarted,
// TransferStarted, TransferFinished), some evict (Eviction); a Snapshot with every worker's and link's gauges per
// simulated second; a link goes suspect and back now and then, and a knob changes now and then. Times never go
// backwards and seqs run 0, 1, 2, ...
//
// Every append is logged (wall time, last seq of the batch) so the benchmark can measure the lag
// from an event's arrival in the staging buffer to the first frame that ingested it.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "core/source/Source.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope::bench {

class SyntheticEventSource : public Source {
 public:
  struct Options {
    double rate = 50'000;                            // events per wall second; 0 = as fast as possible
    std::chrono::microseconds batch_interval{2000};  // how often the producer appends when paced
    double events_per_sim_second = 5'000;            // so 50K/s wall is 10 simulated s per wall s
    std::size_t max_backlog = 150'000;               // unpaced: produced - acknowledged never exceeds this
    std::uint64_t seed = 42;
    int decode = 8;   // D0..D(n-1), at most kMaxWorkers
    int prefill = 1;  // P0..P(m-1); requests go to them round robin; every P -> D link is in each snapshot
  };
  using KindCounts = std::array<std::uint64_t, std::variant_size_v<EventPayload>>;
  struct Push {
    std::int64_t wall_ns;    // steady_clock, when the batch landed in the staging buffer
    std::uint64_t last_seq;  // the batch's last event
    std::uint32_t count;
  };

  explicit SyntheticEventSource(Options options);
  // A whole run at once, without a thread: events from a fresh generator for `options` ingested
  // into `store` until simulated time `until` (the compare view's second run).
  static void fillStore(const Options& options, SimTime until, TelemetryStore& store);
  ~SyntheticEventSource() override;

  std::string description() const override { return "synthetic benchmark source"; }
  SourceCapabilities capabilities() const override { return {}; }
  void start() override;
  void stop() override;
  SourceStatus status() const override;

  // Switches the pace while running (0 = as fast as the backlog allows).
  void setRate(double events_per_second);
  // The consumer's progress (events ingested so far): bounds the unpaced backlog.
  void acknowledge(std::uint64_t ingested) { acked_.store(ingested, std::memory_order_relaxed); }
  std::uint64_t produced() const { return produced_.load(std::memory_order_relaxed); }
  // Appends since the last call, oldest first.
  void takePushes(std::deque<Push>& into);
  // Events produced so far by kind (indexed like EventPayload's alternatives).
  KindCounts kindCounts() const;

 private:
  class Generator;
  void run();

  Options options_;
  std::unique_ptr<Generator> gen_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<double> rate_;
  std::atomic<std::uint64_t> produced_{0}, acked_{0};
  std::atomic<SimTime> sim_time_{0};
  mutable std::mutex pushes_mutex_;
  std::deque<Push> pushes_;
  KindCounts kinds_{};
};

}  // namespace kvscope::bench
