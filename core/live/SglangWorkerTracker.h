#pragma once
// Turns successive scrapes of one SGLang worker into what the event stream carries (issue 5
// section 2): the worker's gauges for the next Snapshot, and events for the failures its counters
// count. A counter's first value is history from before KVScope watched, so it only sets the
// baseline; each later increase becomes events on the worker's P/D link. TTFT and E2E histograms
// are differenced too, giving the latency of the requests finished since the previous scrape.
#include <optional>
#include <string>
#include <vector>

#include "events/Event.h"
#include "live/SglangMetrics.h"

namespace kvscope {

// Where a live worker sits in the run's picture (RunStarted's workers / prefill lists).
struct LiveWorkerRef {
  std::string name;  // "D0", "P0", as the cluster file names it
  WorkerRole role = WorkerRole::Decode;
  WorkerId worker = kNoWorker;        // serving index (decode or unified workers)
  std::int32_t prefill = -1;          // prefill index (prefill workers)
  std::int32_t peer_prefill = 0;      // decode: the P its link events name (the lab runs one P)
  WorkerId peer_decode = kNoWorker;   // prefill: the D its link events name, when there is only one
  std::int64_t kv_capacity = 0;       // from the cluster file; used when /metrics has no capacity
};

// Requests finished between two scrapes and their latency, estimated from the bucket deltas as
// Prometheus' histogram_quantile does (linear inside a bucket).
struct IntervalLatency {
  double requests = 0;
  std::optional<double> mean_s, p50_s, p99_s;
};

struct SglangUpdate {
  std::optional<WorkerGauges> gauges;  // serving workers only (a Snapshot has no prefill gauges)
  std::vector<EventPayload> events;
  std::vector<std::string> notes;
  IntervalLatency ttft, e2e;
};

class SglangWorkerTracker {
 public:
  // At most this many TransferFinished events per scrape, however far the counter jumped.
  static constexpr int kMaxEventsPerScrape = 100;

  explicit SglangWorkerTracker(LiveWorkerRef ref) : ref_(std::move(ref)) {}

  SglangUpdate update(const SglangMetrics& m);
  const LiveWorkerRef& ref() const { return ref_; }

  // The q-quantile (0..1) of a cumulative histogram; nullopt when it holds no observation.
  static std::optional<double> quantile(const std::vector<std::pair<double, double>>& buckets, double q);

 private:
  // The increase since the previous scrape (0 the first time); a drop is a reset: the new value.
  double increase(std::optional<double>& previous, std::optional<double> now, const char* name,
                  std::vector<std::string>& notes);
  IntervalLatency interval(std::optional<LatencyHistogram>& previous, const std::optional<LatencyHistogram>& now);

  LiveWorkerRef ref_;
  std::optional<double> transfer_failed_, bootstrap_failed_;
  std::optional<LatencyHistogram> ttft_, e2e_;
};

}  // namespace kvscope
