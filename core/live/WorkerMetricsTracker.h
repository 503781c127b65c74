#pragma once
// Turns successive scrapes of one engine (SGLang or vLLM) into what the event stream carries: the worker's
// gauges for the next Snapshot, and events for the failures its counters count. On the first scrape
// a counter's value is history from before KVScope watched, so it only sets the baseline; a
// labelled counter (prometheus_client prints a labelled series only once it was incremented) that
// first appears on a later scrape counts from 0, so the first failure on a worker is not lost. Each
// increase becomes events on the worker's P/D link. Histograms are differenced the same way, giving
// the latency of the requests finished since the previous scrape. SGLang sets its scheduler gauges
// only when it logs a batch, and vLLM only when its engine steps, so an idle worker's gauges stay
// frozen at their last values: unchanged for kStaleAfter, they are stale.
#include <optional>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/live/EngineMetrics.h"

namespace kvscope {

// Where a live worker sits in the run's picture (RunStarted's workers / prefill lists).
struct LiveWorkerRef {
  std::string name;  // "D0", "P0", as the cluster file names it
  WorkerRole role = WorkerRole::Decode;
  WorkerId worker = kNoWorker;             // serving index (decode or unified workers)
  std::int32_t prefill = -1;               // prefill index (prefill workers)
  std::int32_t peer_prefill = 0;           // decode: the P its link events name (the lab runs one P)
  WorkerId peer_decode = kNoWorker;        // prefill: the D its link events name, when there is only one
  std::int64_t kv_capacity = 0;            // from the cluster file; used when /metrics has no capacity
  EngineKind engine = EngineKind::Sglang;  // whose /metrics and logs the worker's are
};

// Requests finished between two scrapes and their latency, estimated from the bucket deltas as
// Prometheus' histogram_quantile does (linear inside a bucket).
struct IntervalLatency {
  double requests = 0;
  std::optional<double> mean_s, p50_s, p99_s;
};

struct MetricsUpdate {
  std::optional<WorkerGauges> gauges;  // serving workers only (a Snapshot has no prefill gauges)
  std::vector<EventPayload> events;
  std::vector<std::string> notes;
  IntervalLatency ttft, e2e, itl, queue_time, kv_transfer_ms;
  double retracted = 0;  // requests retracted (SGLang) or preempted (vLLM) for want of KV since the previous scrape
  double prompt_tokens = 0, cached_tokens = 0;  // since the previous scrape: prompt tokens, of which cached
  EngineKind engine = EngineKind::Sglang;
  // The scheduler's gauges have not changed for this long (>= kStaleAfter): they are the values of
  // its last batch log, not the worker's state now.
  std::optional<double> stale_for_s;
  std::string staleReason() const;
};

class WorkerMetricsTracker {
 public:
  // At most this many TransferFinished events per scrape, however far the counter jumped.
  static constexpr int kMaxEventsPerScrape = 100;
  // A busy scheduler logs a decode batch every decode_log_interval (40) iterations, well under a
  // second, and gen_throughput alone changes with each log; 30 s without any change is idleness.
  static constexpr SimTime kStaleAfter = 30'000'000;

  explicit WorkerMetricsTracker(LiveWorkerRef ref) : ref_(std::move(ref)) {}

  // `now`: when the scrape was asked for (the run's clock), for staleness.
  MetricsUpdate update(const EngineMetrics& m, SimTime now = 0);
  const LiveWorkerRef& ref() const { return ref_; }

  // The q-quantile (0..1) of a cumulative histogram; nullopt when it holds no observation.
  static std::optional<double> quantile(const std::vector<std::pair<double, double>>& buckets, double q);

 private:
  // The increase since the previous scrape (0 the first time); a drop is a reset: the new value.
  double increase(std::optional<double>& previous, std::optional<double> now, const char* name,
                  std::vector<std::string>& notes);
  IntervalLatency interval(std::optional<LatencyHistogram>& previous, const std::optional<LatencyHistogram>& now);
  // update()'s parts: whether the scheduler's gauges have been frozen long enough to be stale, and the
  // link events (or notes) for the increases of the transfer and bootstrap failure counters.
  void markStale(MetricsUpdate& u, const EngineMetrics& m, SimTime now);
  void failureEvents(MetricsUpdate& u, const EngineMetrics& m);

  LiveWorkerRef ref_;
  bool seen_ = false;  // a scrape was read: a series absent then starts from 0
  std::optional<double> transfer_failed_, bootstrap_failed_, retracted_, preempted_, prompt_tokens_, cached_tokens_;
  std::optional<double> prefix_queried_, prefix_hit_, external_queried_, external_hit_;
  // The engine's prefix-cache counters summed since the first scrape (WorkerGauges::prefix_*).
  double prefix_queried_sum_ = 0, prefix_hit_sum_ = 0, external_queried_sum_ = 0, external_hit_sum_ = 0;
  std::optional<LatencyHistogram> ttft_, e2e_, itl_, queue_time_, kv_transfer_ms_;
  std::vector<std::optional<double>> frozen_;  // the scheduler gauges of the previous scrape
  SimTime changed_at_ = 0;
};

}  // namespace kvscope
