#include "core/metrics/LabMetrics.h"

#include <nlohmann/json.hpp>

#include "core/model/NumberText.h"

namespace kvscope {

namespace {
using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json dist(const std::optional<SampleSummary>& d, bool mean) {
  if (!d) return nullptr;
  json j{{"p50", d->p50}, {"p90", d->p90}, {"p99", d->p99}};
  if (mean) j["mean"] = d->mean;
  return j;
}
std::optional<double> optOf(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}
std::optional<SampleSummary> distOf(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  const json& d = j.at(key);
  SampleSummary s;
  s.mean = d.value("mean", 0.0);
  s.p50 = d.at("p50").get<double>();
  s.p90 = d.at("p90").get<double>();
  s.p99 = d.at("p99").get<double>();
  return s;
}
std::string pct(const std::optional<double>& v) { return v ? formatNumber("%.1f%%", *v * 100) : std::string("-"); }
std::string num(const std::optional<double>& v, const char* format) {
  return v ? formatNumber(format, *v) : std::string("-");
}
}  // namespace

const char* LabMetrics::classOf(std::int64_t input_tokens, std::int64_t cached_tokens) {
  const std::int64_t uncached = input_tokens - cached_tokens;
  if (uncached >= kHeavyNewTokens) return "HEAVY";
  if (2 * cached_tokens > input_tokens || uncached < kWarmNewTokens) return "WARM";
  return "MEDIUM";
}

void LabMetrics::addTo(json& j) const {
  j["apc"] = opt(apc);
  j["apc_ceiling_intra"] = opt(apc_ceiling_intra);
  j["apc_ceiling_any"] = opt(apc_ceiling_any);
  j["tpot_s"] = dist(tpot_s, true);
  j["uncached_tokens"] = dist(uncached_tokens, false);
  j["apc_by_turn"] = json::object();
  for (const auto& [turn, rate] : apc_by_turn) j["apc_by_turn"][std::to_string(turn)] = rate;
  j["worker_ttft_p90_s"] = worker_ttft_p90_median_s
                               ? json{{"median", *worker_ttft_p90_median_s}, {"max", opt(worker_ttft_p90_max_s)}}
                               : json(nullptr);
  j["request_balance"] = opt(request_balance);
  j["decode_tps"] = opt(decode_tps);
  j["total_tps"] = opt(total_tps);
  j["wall_amplification"] = opt(wall_amplification);
  j["completion_rate"] = opt(completion_rate);
  j["dispatch_slip_s"] = dist(dispatch_slip_s, false);
  const WorkloadShape& w = workload;
  j["workload"] = {{"requests", w.requests},
                   {"sessions", w.sessions},
                   {"input_tokens", dist(w.input_tokens, true)},
                   {"output_tokens", dist(w.output_tokens, true)},
                   {"single_turn_share", opt(w.single_turn_share)},
                   {"inter_turn_s", w.inter_turn_p50_s ? json{{"p25", opt(w.inter_turn_p25_s)},
                                                              {"p50", opt(w.inter_turn_p50_s)},
                                                              {"p75", opt(w.inter_turn_p75_s)},
                                                              {"p90", opt(w.inter_turn_p90_s)}}
                                                       : json(nullptr)},
                   {"share_over_32k", opt(w.share_over_32k)},
                   {"reuse_intra_share", opt(w.reuse_intra_share)}};
  j["request_classes"] = json::object();
  for (const auto& [name, c] : request_classes)
    j["request_classes"][name] = {
        {"count", c.count}, {"ttft_p90_s", opt(c.ttft_p90_s)}, {"e2e_p90_s", opt(c.e2e_p90_s)}};
}

LabMetrics LabMetrics::fromJson(const json& j) {
  // Summaries written before these metrics existed have none of the keys: everything stays unknown.
  LabMetrics m;
  m.apc = optOf(j, "apc");
  m.apc_ceiling_intra = optOf(j, "apc_ceiling_intra");
  m.apc_ceiling_any = optOf(j, "apc_ceiling_any");
  m.tpot_s = distOf(j, "tpot_s");
  m.uncached_tokens = distOf(j, "uncached_tokens");
  if (j.contains("apc_by_turn") && j.at("apc_by_turn").is_object())
    for (const auto& [turn, rate] : j.at("apc_by_turn").items()) m.apc_by_turn[std::stoi(turn)] = rate.get<double>();
  if (j.contains("worker_ttft_p90_s") && j.at("worker_ttft_p90_s").is_object()) {
    m.worker_ttft_p90_median_s = optOf(j.at("worker_ttft_p90_s"), "median");
    m.worker_ttft_p90_max_s = optOf(j.at("worker_ttft_p90_s"), "max");
  }
  m.request_balance = optOf(j, "request_balance");
  m.decode_tps = optOf(j, "decode_tps");
  m.total_tps = optOf(j, "total_tps");
  m.wall_amplification = optOf(j, "wall_amplification");
  m.completion_rate = optOf(j, "completion_rate");
  m.dispatch_slip_s = distOf(j, "dispatch_slip_s");
  if (j.contains("workload") && j.at("workload").is_object()) {
    const json& w = j.at("workload");
    WorkloadShape& s = m.workload;
    s.requests = w.value("requests", 0L);
    s.sessions = w.value("sessions", 0L);
    s.input_tokens = distOf(w, "input_tokens");
    s.output_tokens = distOf(w, "output_tokens");
    s.single_turn_share = optOf(w, "single_turn_share");
    if (w.contains("inter_turn_s") && w.at("inter_turn_s").is_object()) {
      const json& t = w.at("inter_turn_s");
      s.inter_turn_p25_s = optOf(t, "p25");
      s.inter_turn_p50_s = optOf(t, "p50");
      s.inter_turn_p75_s = optOf(t, "p75");
      s.inter_turn_p90_s = optOf(t, "p90");
    }
    s.share_over_32k = optOf(w, "share_over_32k");
    s.reuse_intra_share = optOf(w, "reuse_intra_share");
  }
  if (j.contains("request_classes") && j.at("request_classes").is_object())
    for (const auto& [name, c] : j.at("request_classes").items())
      m.request_classes[name] =
          RequestClassStats{c.at("count").get<long>(), optOf(c, "ttft_p90_s"), optOf(c, "e2e_p90_s")};
  return m;
}

std::string LabMetrics::table() const {
  std::string out;
  if (tpot_s)
    out += "TPOT (s) " + formatNumber("%9.4f", tpot_s->mean) + formatNumber("%9.4f", tpot_s->p50) +
           formatNumber("%9.4f", tpot_s->p90) + formatNumber("%9.4f", tpot_s->p99) + "\n";
  out += "prefix-cache hit rate (APC) " + pct(apc) +
         " of prompt tokens; an unbounded cache: " + pct(apc_ceiling_intra) + " within sessions, " +
         pct(apc_ceiling_any) + " across\n";
  if (uncached_tokens)
    out += "uncached tokens per request  p50 " + formatNumber("%.0f", uncached_tokens->p50) + "  p90 " +
           formatNumber("%.0f", uncached_tokens->p90) + "  p99 " + formatNumber("%.0f", uncached_tokens->p99) + "\n";
  out += "worker TTFT p90 (s)  median " + num(worker_ttft_p90_median_s, "%.3f") + "  max " +
         num(worker_ttft_p90_max_s, "%.3f") + "   request balance (max/min) " + num(request_balance, "%.2fx") + "\n";
  out += "decode " + num(decode_tps, "%.1f") + " tokens/s, total " + num(total_tps, "%.0f") +
         " tokens/s   completion " + pct(completion_rate) + "   wall amplification " + num(wall_amplification, "%.2fx");
  if (dispatch_slip_s) out += "   dispatch slip p90 " + formatNumber("%.2f s", dispatch_slip_s->p90);
  out += "\n";
  if (!request_classes.empty()) {
    out += "class    requests  TTFT p90  E2E p90\n";
    for (const char* name : {"WARM", "MEDIUM", "HEAVY"}) {
      const auto it = request_classes.find(name);
      if (it == request_classes.end()) continue;
      char line[96];
      std::snprintf(line, sizeof line, "%-7s  %8ld  %8s  %7s\n", name, it->second.count,
                    num(it->second.ttft_p90_s, "%.3f").c_str(), num(it->second.e2e_p90_s, "%.3f").c_str());
      out += line;
    }
  }
  const WorkloadShape& w = workload;
  if (w.input_tokens) {
    out += "workload " + std::to_string(w.requests) + " requests, " + std::to_string(w.sessions) + " sessions (" +
           pct(w.single_turn_share) + " single-turn); input p50 " + formatNumber("%.0f", w.input_tokens->p50) +
           " p90 " + formatNumber("%.0f", w.input_tokens->p90) + ", " + pct(w.share_over_32k) +
           " over 32K; output p50 " + formatNumber("%.0f", w.output_tokens->p50) + "; inter-turn p50 " +
           num(w.inter_turn_p50_s, "%.1f s") + "; reuse within sessions " + pct(w.reuse_intra_share) + "\n";
  }
  if (!apc_by_turn.empty()) {
    out += "APC by turn:";
    int shown = 0;
    for (const auto& [turn, rate] : apc_by_turn) {
      if (shown++ == 12) {
        out += " ...";
        break;
      }
      out += " " + std::to_string(turn) + (turn == kMaxTurnIndex ? "+" : "") + ":" + formatNumber("%.0f%%", rate * 100);
    }
    out += "\n";
  }
  return out;
}

}  // namespace kvscope
