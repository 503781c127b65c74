#pragma once
// What the lab reports for a run (ARCHITECTURE.md D7), computed from the event stream alone so the
// same numbers come from a live simulation, a recording or a real cluster's events.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/diagnosis/Finding.h"
#include "core/metrics/LabMetrics.h"
#include "core/stats/Percentiles.h"

namespace kvscope {

struct WorkerSummary {
  std::string id;
  std::string role;
  long bindings = 0;
  double share = 0;
  long sessions = 0;
  double kv_peak_frac = 0;
  long evictions = 0;
  long long tokens_served = 0;
  long retractions = 0;  // requests the worker retracted from its decode batch
};

struct RunSummary {
  std::string scenario;
  std::string policy;
  unsigned long long seed = 0;
  double sim_seconds = 0;
  double wall_seconds = 0;
  long total = 0, completed = 0, failed = 0;
  double failure_rate = 0;
  SampleSummary e2e_s, ttft_s;
  std::vector<WorkerSummary> workers;
  long eviction_count = 0;
  double eviction_mean_tokens = 0;
  long long eviction_max_tokens = 0;
  long eviction_sessions_hit = 0;
  long seeds = 0, reseeds = 0, direct_appends = 0;
  long link_dead_events = 0, aborted_requests = 0, worker_crashes = 0, corrections = 0;
  // Decode out of memory: requests retracted, and the retraction events that took them.
  long retractions = 0, retraction_events = 0;
  // Times a simulated KV pool held more than its capacity, as the last snapshots said (a simulator bug).
  long long kv_capacity_violations = 0;
  // Live router: requests routed and forgotten with no report (a client that crashed or never
  // reports); their load and hashes went with them.
  std::int64_t expired_unreported = 0;
  std::optional<double> token_imbalance;  // max/min tokens served across workers; none when one served nothing
  long skipped_records = 0;
  std::vector<std::string> source_notes;  // what the run's source could not use (RunFinished::notes)
  std::vector<Finding> diagnosis;
  LabMetrics lab;  // the metrics the lab judges by (LabMetrics.h)

  nlohmann::json toJson() const;
  std::string toTable() const;
};

// `text` with every control byte except the newline shown as \xNN: what toTable() prints, and
// what any line carrying a name from a file or an RPC should pass through before a terminal.
std::string terminalSafe(const std::string& text);

}  // namespace kvscope
