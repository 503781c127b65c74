#include "core/metrics/RunSummary.h"
#include "core/diagnosis/FindingJson.h"
#include "core/model/NumberText.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace kvscope {

namespace {
nlohmann::json dist(const SampleSummary& d) {
  return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}};
}
}  // namespace

nlohmann::json RunSummary::toJson() const {
  nlohmann::json j;
  j["scenario"] = scenario;
  j["policy"] = policy;
  j["seed"] = seed;
  j["sim_seconds"] = sim_seconds;
  j["wall_seconds"] = wall_seconds;
  j["requests"] = {{"total", total}, {"completed", completed}, {"failed", failed}};
  j["failure_rate"] = failure_rate;
  j["e2e_s"] = dist(e2e_s);
  j["ttft_s"] = dist(ttft_s);
  j["workers"] = nlohmann::json::array();
  for (const auto& w : workers)
    j["workers"].push_back({{"id", w.id},
                            {"role", w.role},
                            {"bindings", w.bindings},
                            {"share", w.share},
                            {"sessions", w.sessions},
                            {"kv_peak_frac", w.kv_peak_frac},
                            {"evictions", w.evictions},
                            {"tokens_served", w.tokens_served},
                            {"retractions", w.retractions}});
  j["evictions"] = {{"count", eviction_count},
                    {"mean_tokens", eviction_mean_tokens},
                    {"max_tokens", eviction_max_tokens},
                    {"sessions_hit", eviction_sessions_hit}};
  j["seeds"] = seeds;
  j["reseeds"] = reseeds;
  j["direct_appends"] = direct_appends;
  j["link_dead_events"] = link_dead_events;
  j["aborted_requests"] = aborted_requests;
  j["worker_crashes"] = worker_crashes;
  j["corrections"] = corrections;
  j["retractions"] = {{"requests", retractions}, {"events", retraction_events}};
  j["kv_capacity_violations"] = kv_capacity_violations;
  j["expired_unreported"] = expired_unreported;
  j["token_imbalance"] = token_imbalance ? nlohmann::json(*token_imbalance) : nlohmann::json(nullptr);
  j["skipped_records"] = skipped_records;
  if (!source_notes.empty()) j["source_notes"] = source_notes;
  lab.addTo(j);
  j["diagnosis"] = nlohmann::json::array();
  for (const auto& f : diagnosis) j["diagnosis"].push_back(findingJson(f));
  return j;
}

std::string RunSummary::toTable() const {
  std::string out;
  out += "scenario " + scenario + "  policy " + policy + "  seed " + std::to_string(seed) + "  simulated " +
         formatNumber("%.0f s", sim_seconds) + " in " + formatNumber("%.2f s", wall_seconds) + "\n\n";
  out += "requests  " + std::to_string(total) + " total, " + std::to_string(completed) + " completed, " +
         std::to_string(failed) + " failed (" + formatNumber("%.1f%%", failure_rate * 100) + ")";
  if (skipped_records > 0) out += ", " + std::to_string(skipped_records) + " malformed records skipped";
  out += "\n";
  out += "              mean      p50      p90      p99\n";
  out += "E2E (s)  " + formatNumber("%9.3f", e2e_s.mean) + formatNumber("%9.3f", e2e_s.p50) +
         formatNumber("%9.3f", e2e_s.p90) + formatNumber("%9.3f", e2e_s.p99) + "\n";
  out += "TTFT (s) " + formatNumber("%9.3f", ttft_s.mean) + formatNumber("%9.3f", ttft_s.p50) +
         formatNumber("%9.3f", ttft_s.p90) + formatNumber("%9.3f", ttft_s.p99) + "\n";
  out += lab.table() + "\n";
  out += "worker  role     bindings   share  sessions  kv peak  evictions\n";
  for (const auto& w : workers) {
    char line[160];
    std::snprintf(line, sizeof line, "%-6s  %-7s  %8ld  %5.1f%%  %8ld  %6.1f%%  %9ld\n", w.id.c_str(), w.role.c_str(),
                  w.bindings, w.share * 100, w.sessions, w.kv_peak_frac * 100, w.evictions);
    out += line;
  }
  out += "\nevictions " + std::to_string(eviction_count) + " (mean " + formatNumber("%.0f", eviction_mean_tokens) +
         " tokens, max " + std::to_string(eviction_max_tokens) + ", " + std::to_string(eviction_sessions_hit) +
         " sessions hit)\n";
  out += "seeds " + std::to_string(seeds) + "  reseeds " + std::to_string(reseeds) + "  direct appends " +
         std::to_string(direct_appends) + "\n";
  out += "link-dead events " + std::to_string(link_dead_events) + "  aborted requests " +
         std::to_string(aborted_requests) + "  worker crashes " + std::to_string(worker_crashes) + "  corrections " +
         std::to_string(corrections) + "\n";
  out += "retractions " + std::to_string(retractions) + " requests in " + std::to_string(retraction_events) +
         " decode out-of-memory events";
  if (retractions > 0) {
    std::string per;
    for (const auto& w : workers)
      if (w.retractions > 0) per += (per.empty() ? "" : ", ") + w.id + " " + std::to_string(w.retractions);
    out += " (" + per + ")";
  }
  out += "\n";
  if (expired_unreported > 0)
    out +=
        std::to_string(expired_unreported) +
        " requests expired unreported (routed, never reported done: their load was dropped; see unreported_expiry_s)\n";
  if (kv_capacity_violations > 0)
    out += "KV POOL OVER CAPACITY " + std::to_string(kv_capacity_violations) +
           " times: a simulator bug, the numbers above are not physical\n";
  out += "token imbalance (max/min served) " +
         (token_imbalance ? formatNumber("%.2fx", *token_imbalance) : std::string("inf (a worker served nothing)")) +
         "\n";
  if (!source_notes.empty()) {
    out += "\nnotes on the source:\n";
    for (const auto& n : source_notes) out += "  " + n + "\n";
  }
  out += diagnosis.empty() ? "\ndiagnosis: no known failure mode found\n" : "\ndiagnosis:\n";
  for (const auto& f : diagnosis) {
    const std::string subjects = f.subjects.empty() ? "" : " - " + f.subjectsText();  // the JSON has them all
    out += "  [" + f.mode + "] " + f.name + subjects + "  (" + formatNumber("%.0f", f.window_start_s) + "-" +
           formatNumber("%.0f s", f.window_end_s) + (f.resolved ? ", resolved" : "") + ")\n";
    out += "      evidence:   " + f.evidence + "\n";
    out += "      suggestion: " + f.suggestion + "\n";
  }
  return terminalSafe(out);
}

std::string terminalSafe(const std::string& text) {
  // Names come from files and RPCs: an ESC (or any control byte but the newline) would reach the
  // terminal as a command - it is shown as \xNN instead.
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n') || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kvscope
