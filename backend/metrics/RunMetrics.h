#pragma once
// The run's metrics in Prometheus text format 0.0.4, for `kvscope-cli serve --metrics`: folds the
// event stream (counters, latency histograms) and the latest Snapshot (per-worker and per-link
// gauges) into plain numbers, and renders them on demand. Where SGLang exports the same quantity,
// the name follows SGLang's (kvscope_token_usage ~ sglang:token_usage, same histogram buckets), so
// a lab's SGLang dashboard charts a KVScope run by swapping the prefix.
//
// Counters fold the same events, with the same rules, as SummaryCollector, so a scrape at the end of
// a run equals the summary `simulate` prints (a test checks this).
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/events/Event.h"

namespace kvscope {

class RunMetrics : public EventSink {
 public:
  // Upper bounds (seconds) of the histogram buckets, without +Inf.
  static constexpr std::array<double, 22> kTtftBuckets = {
      0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15, 20, 25, 30, 60, 120};
  static constexpr std::array<double, 20> kE2eBuckets = {0.3, 0.5, 0.8, 1,  1.5, 2,  2.5, 5,   10,  15,
                                                         20,  30,  40,  50, 60,  90, 120, 180, 300, 600};
  // vLLM's time_per_output_token_seconds buckets (vllm/v1/metrics/loggers.py).
  static constexpr std::array<double, 18> kTpotBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
                                                          0.5,  0.75,  1.0,  2.5,   5.0, 7.5,  10,  20,  40};
  static constexpr std::array<double, 12> kSlipBuckets = {0, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};

  // The simulation thread, for every event: a few additions under an uncontended mutex.
  void onEvent(const Event& e) override;
  // Any thread (the HTTP server's): the exposition text of everything folded so far.
  std::string render() const;

 private:
  template <std::size_t N>
  struct Histogram {
    std::array<std::uint64_t, N + 1> buckets{};  // per bucket (not cumulative); the last is +Inf
    std::uint64_t count = 0;
    double sum = 0;
    void observe(double seconds, const std::array<double, N>& bounds);
  };

  struct Worker {
    std::string name, role;  // label values, escaped once when the worker is first seen
    std::uint64_t bindings = 0;
    std::uint64_t prompt_tokens = 0, generation_tokens = 0;
    // The lab's APC, as vLLM's prefix_cache_queries / _hits count it: prompt tokens of requests
    // whose hit is known, and the hits.
    std::uint64_t cache_queries = 0, cache_hits = 0;
    std::uint64_t retracted = 0, last_retracted = 0;  // requests retracted: all, and by the latest retraction
    bool has_gauges = false;                          // a Snapshot reported this worker
    WorkerGauges gauges;
  };

  // Everything render() needs; copied out under the lock so formatting never holds up the run.
  struct State {
    bool has_run = false;
    std::string scenario, policy, seed, profile;  // label values, escaped
    bool finished = false;
    SimTime time = 0;
    std::vector<Worker> workers;
    std::vector<std::string> prefill_names;
    std::vector<LinkGauges> links;
    std::uint64_t requests = 0, failures = 0;
    std::uint64_t evictions = 0, evicted_tokens = 0;
    std::uint64_t seeds = 0, reseeds = 0, direct = 0;
    std::uint64_t link_dead = 0, aborted = 0, crashes = 0, restarts = 0, corrections = 0;
    std::uint64_t retractions = 0;  // decode out-of-memory events
    Histogram<kTtftBuckets.size()> ttft;
    Histogram<kE2eBuckets.size()> e2e;
    Histogram<kTpotBuckets.size()> tpot;
    Histogram<kSlipBuckets.size()> slip;
    std::uint64_t ceiling_intra = 0, ceiling_any = 0;  // what an unbounded cache would hit (tokens)
    std::array<std::uint64_t, 3> classes{};            // completed WARM, MEDIUM, HEAVY requests
    std::int64_t offered = 0;
    double trace_window_s = 0;
  };

  Worker& worker(WorkerId w);  // grows the table for an id the run did not announce
  // onEvent()'s two larger folds; mutex_ held.
  void startRun(const RunStarted& r, SimTime time);
  void countRequest(const RequestDone& d);

  // render()'s sections, in the order they are written. `labels`: each worker's label set.
  static void renderRun(std::string& out, const State& s);
  static void renderWorkerGauges(std::string& out, const State& s, const std::vector<std::string>& labels);
  static void renderWorkerCounters(std::string& out, const State& s, const std::vector<std::string>& labels);
  static void renderRunCounters(std::string& out, const State& s);
  static void renderLabCounters(std::string& out, const State& s);
  static void renderHistograms(std::string& out, const State& s);
  static void renderLinkGauges(std::string& out, const State& s);

  mutable std::mutex mutex_;
  State state_;
};

}  // namespace kvscope
