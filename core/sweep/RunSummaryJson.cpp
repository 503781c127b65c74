#include "core/sweep/RunSummaryJson.h"

#include <nlohmann/json.hpp>

namespace kvscope {

namespace {
SampleSummary dist(const nlohmann::json& j) {
  SampleSummary d;
  d.mean = j.at("mean").get<double>();
  d.p50 = j.at("p50").get<double>();
  d.p90 = j.at("p90").get<double>();
  d.p99 = j.at("p99").get<double>();
  return d;
}
}  // namespace

RunSummary RunSummaryJson::fromJson(const nlohmann::json& j) {
  RunSummary s;
  s.scenario = j.at("scenario").get<std::string>();
  s.policy = j.at("policy").get<std::string>();
  s.seed = j.at("seed").get<unsigned long long>();
  s.sim_seconds = j.at("sim_seconds").get<double>();
  s.wall_seconds = j.at("wall_seconds").get<double>();
  const auto& r = j.at("requests");
  s.total = r.at("total").get<long>();
  s.completed = r.at("completed").get<long>();
  s.failed = r.at("failed").get<long>();
  s.failure_rate = j.at("failure_rate").get<double>();
  s.e2e_s = dist(j.at("e2e_s"));
  s.ttft_s = dist(j.at("ttft_s"));
  for (const auto& w : j.at("workers")) {
    WorkerSummary ws;
    ws.id = w.at("id").get<std::string>();
    ws.role = w.at("role").get<std::string>();
    ws.bindings = w.at("bindings").get<long>();
    ws.share = w.at("share").get<double>();
    ws.sessions = w.at("sessions").get<long>();
    ws.kv_peak_frac = w.at("kv_peak_frac").get<double>();
    ws.evictions = w.at("evictions").get<long>();
    ws.tokens_served = w.at("tokens_served").get<long long>();
    ws.retractions = w.value("retractions", 0L);  // absent in summaries written before retractions existed
    s.workers.push_back(ws);
  }
  const auto& ev = j.at("evictions");
  s.eviction_count = ev.at("count").get<long>();
  s.eviction_mean_tokens = ev.at("mean_tokens").get<double>();
  s.eviction_max_tokens = ev.at("max_tokens").get<long long>();
  s.eviction_sessions_hit = ev.at("sessions_hit").get<long>();
  s.seeds = j.at("seeds").get<long>();
  s.reseeds = j.at("reseeds").get<long>();
  s.direct_appends = j.at("direct_appends").get<long>();
  s.link_dead_events = j.at("link_dead_events").get<long>();
  s.aborted_requests = j.at("aborted_requests").get<long>();
  s.worker_crashes = j.at("worker_crashes").get<long>();
  s.corrections = j.at("corrections").get<long>();
  if (j.contains("retractions")) {
    s.retractions = j.at("retractions").at("requests").get<long>();
    s.retraction_events = j.at("retractions").at("events").get<long>();
  }
  s.kv_capacity_violations = j.value("kv_capacity_violations", 0LL);
  s.expired_unreported = j.value("expired_unreported", std::int64_t{0});
  if (!j.at("token_imbalance").is_null()) s.token_imbalance = j.at("token_imbalance").get<double>();
  s.skipped_records = j.at("skipped_records").get<long>();
  s.lab = LabMetrics::fromJson(j);
  for (const auto& f : j.at("diagnosis")) {
    Finding finding;
    finding.mode = f.at("mode").get<std::string>();
    finding.name = f.at("name").get<std::string>();
    if (f.contains("subjects")) finding.subjects = f.at("subjects").get<std::vector<std::string>>();
    if (f.contains("fix_knobs")) finding.fix_knobs = f.at("fix_knobs").get<std::map<std::string, double>>();
    if (f.contains("fix_policy")) finding.fix_policy = f.at("fix_policy").get<std::string>();
    finding.window_start_s = f.at("window_s").at(0).get<double>();
    finding.window_end_s = f.at("window_s").at(1).get<double>();
    finding.evidence = f.at("evidence").get<std::string>();
    finding.suggestion = f.at("suggestion").get<std::string>();
    finding.resolved = f.value("resolved", false);  // absent before findings could resolve
    s.diagnosis.push_back(finding);
  }
  return s;
}

}  // namespace kvscope
