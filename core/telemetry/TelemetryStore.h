#pragma once
// What every screen reads: the run's state folded from the event stream, bounded at any run length
// (ARCHITECTURE.md "The telemetry store is bounded"). Per-worker and per-link gauges are MinMaxSeries;
// discrete events (evictions, seeds, crashes, link changes, knob changes, ...) a time-sorted ring;
// the latest route decisions and finished requests rings for the decision inspector. Owned and
// fed by the GUI thread; Qt-free so the benchmarks and the CLI can use it too.
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "core/diagnosis/DiagnosisEngine.h"
#include "core/events/Event.h"
#include "core/metrics/SummaryCollector.h"
#include "core/telemetry/HitRateWindow.h"
#include "core/telemetry/MinMaxSeries.h"
#include "core/telemetry/RequestTraces.h"
#include "core/telemetry/WorkerGauge.h"

namespace kvscope {

enum class LinkGauge { QueueDepth, BytesInFlight, Count };

struct WorkerSeries {
  WorkerInfo info;
  std::array<MinMaxSeries, static_cast<std::size_t>(WorkerGauge::Count)> gauges;
  WorkerGauges latest;  // the last snapshot's values
  long admitted = 0;    // bindings admitted so far (the summary's "bindings")
  long evictions = 0;
  bool alive = true;
  SimTime last_admitted = -1;  // the newest binding's time (-1: none yet)
  SimTime last_eviction = -1;
  SimTime crashed_at = -1;    // the newest crash (-1: never)
  SimTime restarted_at = -1;  // the restart after it (-1: none yet)
  int crashes = 0;
  // The lab's prefix-cache hit rate (APC) of the requests it finished in the last minute, and what
  // an unbounded cache would have hit on them, sampled at each snapshot (none without a request).
  MinMaxSeries apc, apc_ceiling;
  HitRateWindow hits;
  // Live: blocks the engine's KV events stored and removed per second between the last two snapshots.
  double kv_stores_per_s = 0, kv_removals_per_s = 0;
  SimTime last_snapshot = -1;
  MinMaxSeries& gauge(WorkerGauge g) { return gauges[static_cast<std::size_t>(g)]; }
  const MinMaxSeries& gauge(WorkerGauge g) const { return gauges[static_cast<std::size_t>(g)]; }
};

struct LinkSeries {
  std::int32_t prefill = 0;
  WorkerId worker = kNoWorker;
  std::string name;  // "P0->D1"
  std::array<MinMaxSeries, static_cast<std::size_t>(LinkGauge::Count)> gauges;
  LinkGauges latest;
  std::string last_failure;  // the last transfer failure or dead-marking reason
  SimTime last_failure_time = -1;
  long failures = 0;
  MinMaxSeries& gauge(LinkGauge g) { return gauges[static_cast<std::size_t>(g)]; }
  const MinMaxSeries& gauge(LinkGauge g) const { return gauges[static_cast<std::size_t>(g)]; }
};

// A row of the event timeline: decode workers first, then prefill workers, then links.
struct TimelineRow {
  enum Kind { Worker, Prefill, Link } kind = Worker;
  std::string name;
};

struct LatencyWindow {
  double window_s = 0;
  long requests = 0, failed = 0;
  double failure_rate = 0;
  SampleSummary ttft_s, e2e_s;
};

class TelemetryStore {
 public:
  struct Limits {
    std::size_t discrete_events = 200'000;  // evictions, seeds, crashes, ... (oldest dropped first)
    std::size_t decisions = 20'000;         // route decisions kept for the inspector
    // Candidates kept per decision: the best ranked, and the chosen one. A 64-D decision holds 64
    // (7.5 KiB); kept whole, 20,000 of them would cost 150 MB and a copy per event the GUI feels.
    std::size_t decision_candidates = 16;
    std::size_t requests = 20'000;         // finished requests kept for the inspector's table
    std::size_t series_capacity = 4096;    // buckets per rollup level of every gauge
    std::size_t raw_samples = 1 << 16;     // newest samples every gauge keeps exactly (18 h at 1/s)
    std::size_t control_changes = 10'000;  // knob and policy changes kept for chart markers
    std::size_t new_sessions = 100'000;    // first-admission times kept for newSessionsSince()
  };
  TelemetryStore() : TelemetryStore(Limits{}) {}
  explicit TelemetryStore(Limits limits);

  void ingest(const std::vector<Event>& batch);
  void ingest(const Event& e);
  void clear();  // forget everything (a new source)

  // Bumped by every ingest that changed something; views redraw only when it moved.
  std::uint64_t revision() const { return revision_; }
  // Bumped by every RunStarted and clear(): views rebuild their per-worker rows and series.
  std::uint64_t runId() const { return run_id_; }
  std::uint64_t eventCount() const { return events_; }
  std::uint64_t lastSeq() const { return last_seq_; }
  SimTime now() const { return now_; }
  bool finished() const { return finished_; }

  const std::optional<RunStarted>& run() const { return run_; }
  const std::string& policy() const { return policy_; }
  const std::map<std::string, double>& knobs() const { return knobs_; }

  const std::vector<WorkerSeries>& workers() const { return workers_; }
  const std::vector<LinkSeries>& links() const { return links_; }
  const LinkSeries* link(std::int32_t prefill, WorkerId worker) const;
  std::vector<TimelineRow> timelineRows() const;
  // The timeline row of a discrete event, -1 when it has none (knob changes span all rows).
  int rowOf(const Event& e) const;
  // A second row the event also belongs on, -1 when none: a seed or reseed is the prefill worker's
  // work as much as the decode worker's, so it shows on its P row too.
  int prefillRowOf(const Event& e) const;
  // The timeline rows of a decode worker, a prefill worker and a P->D link (-1: none).
  int workerRow(WorkerId w) const;
  int prefillRow(std::int32_t prefill) const;
  int linkRow(std::int32_t prefill, WorkerId w) const;

  // Discrete events in time order (already sorted: the stream is). Bounded; see droppedEvents().
  const std::deque<Event>& discreteEvents() const { return discrete_; }
  std::uint64_t droppedEvents() const { return dropped_discrete_; }
  // Index range [first, last) of discrete events with time in [from, to].
  std::pair<std::size_t, std::size_t> discreteRange(SimTime from, SimTime to) const;

  // Knob and policy changes only (human-rate, bounded): the markers on every time chart.
  const std::deque<Event>& controlChanges() const { return control_changes_; }

  const std::deque<RequestDone>& requests() const { return requests_; }
  // The finished requests' spans and transfers (the timeline's selected request).
  const RequestTraces& requestTraces() const { return traces_; }
  const std::deque<SimTime>& requestTimes() const { return request_times_; }
  // The decision that routed `request`, if still held.
  const RouteDecision* decisionFor(RequestId request) const;
  // Of that decision's candidates, how many lower-ranked ones were not kept (Limits::decision_candidates).
  std::size_t candidatesOmitted(RequestId request) const;
  const std::deque<RouteDecision>& decisions() const { return decisions_; }

  // Every finished request's TTFT and E2E in seconds, at its finish time (min/max envelopes).
  const MinMaxSeries& ttftSeries() const { return ttft_series_; }
  const MinMaxSeries& e2eSeries() const { return e2e_series_; }
  // The whole cluster's APC and its ceiling over the last minute (as WorkerSeries::apc).
  const MinMaxSeries& apcSeries() const { return apc_series_; }
  const MinMaxSeries& apcCeilingSeries() const { return apc_ceiling_series_; }

  // Sessions whose first request was admitted at or after `since` (what K, which only steers new
  // sessions, can act on). Exact for the newest Limits::new_sessions of them.
  long newSessionsSince(SimTime since) const;
  // When the newest session was first admitted (none yet: nullopt).
  std::optional<SimTime> lastNewSession() const {
    return new_session_times_.empty() ? std::nullopt : std::optional(new_session_times_.back());
  }

  // TTFT/E2E percentiles and failure rate of requests finished in the last `window_s` before now().
  LatencyWindow latencyWindow(double window_s) const;

  RunSummary summary() const { return summary_.summary(); }
  std::vector<Finding> findings() const { return diagnosis_.findings(); }

  std::size_t approxMemoryBytes() const;

  // True for the kinds kept in discreteEvents() (what the timeline draws).
  static bool isDiscrete(const EventPayload& p);

 private:
  MinMaxSeries series() const { return MinMaxSeries(limits_.series_capacity, 4, 8, limits_.raw_samples); }
  void onRunStarted(const RunStarted& r);
  void onSnapshot(SimTime t, const Snapshot& s);
  void onAdmission(SimTime t, const Admission& a);
  void onRequestDone(SimTime t, const RequestDone& d);
  void sampleHitRates(SimTime t);
  LinkSeries& linkSeries(std::int32_t prefill, WorkerId worker);
  WorkerSeries* worker(WorkerId w);
  template <typename T, typename Ring>
  void pushBounded(Ring& ring, T&& value, std::size_t limit);

  Limits limits_;
  std::uint64_t revision_ = 0, run_id_ = 0, events_ = 0, last_seq_ = 0;
  SimTime now_ = 0;
  bool finished_ = false;
  std::optional<RunStarted> run_;
  std::string policy_;
  std::map<std::string, double> knobs_;
  std::vector<WorkerSeries> workers_;
  std::vector<LinkSeries> links_;
  // (prefill, worker) -> position in links_: a snapshot names every P x D link (1,024 at 16 x 64),
  // so a scan of links_ per link was quadratic in the cluster.
  absl::flat_hash_map<std::uint64_t, std::uint32_t> link_index_;
  static std::uint64_t linkKey(std::int32_t prefill, WorkerId worker) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(prefill)) << 32 | static_cast<std::uint32_t>(worker);
  }
  int linkPosition(std::int32_t prefill, WorkerId worker) const;
  std::deque<Event> discrete_;
  std::deque<Event> control_changes_;
  std::uint64_t dropped_discrete_ = 0;
  std::deque<RequestDone> requests_;
  RequestTraces traces_;
  MinMaxSeries ttft_series_, e2e_series_;
  MinMaxSeries apc_series_, apc_ceiling_series_;
  HitRateWindow hits_;
  std::deque<SimTime> request_times_;
  absl::flat_hash_set<SessionId> seen_sessions_;  // forgotten past 4 x Limits::new_sessions
  std::deque<SimTime> new_session_times_;
  void keepDecision(const RouteDecision& d);
  std::deque<RouteDecision> decisions_;
  std::deque<std::uint32_t> omitted_;  // per kept decision: candidates not kept
  // Request ids come in increasing order from every source we have (the simulator numbers them, a
  // router counts them): then a binary search over the ring finds a request's newest decision and
  // no index is kept (its upkeep was a third of keeping a decision). The first id out of order
  // builds the index, kept from then on.
  bool ids_in_order_ = true;
  absl::flat_hash_map<RequestId, std::uint64_t> decision_index_;         // request -> absolute position
  std::optional<std::size_t> decisionPosition(RequestId request) const;  // into decisions_
  std::uint64_t decisions_dropped_ = 0;
  SummaryCollector summary_;
  DiagnosisEngine diagnosis_;
};

}  // namespace kvscope
