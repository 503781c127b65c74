#include "core/sweep/SweepMetric.h"
#include "core/model/NumberText.h"

#include <cstdio>

namespace kvscope {

std::string SweepMetric::format(double v) const {
  switch (kind) {
    case Kind::Seconds:
      return formatNumber("%.3f", v);
    case Kind::Fraction:
      return formatNumber("%.2f%%", v * 100);
    case Kind::Count:
      return formatNumber("%.1f", v);
    case Kind::Ratio:
      return formatNumber("%.3fx", v);
  }
  return formatNumber("%g", v);
}

std::vector<SweepMetric> SweepMetric::all(const std::vector<std::string>& worker_ids) {
  using K = Kind;
  using R = const RunSummary&;
  std::vector<SweepMetric> m{
      {"e2e_mean_s", "E2E mean (s)", K::Seconds, [](R s) { return std::optional(s.e2e_s.mean); }},
      {"e2e_p50_s", "E2E p50 (s)", K::Seconds, [](R s) { return std::optional(s.e2e_s.p50); }},
      {"e2e_p90_s", "E2E p90 (s)", K::Seconds, [](R s) { return std::optional(s.e2e_s.p90); }},
      {"ttft_p90_s", "TTFT p90 (s)", K::Seconds, [](R s) { return std::optional(s.ttft_s.p90); }},
      {"ttft_p99_s", "TTFT p99 (s)", K::Seconds, [](R s) { return std::optional(s.ttft_s.p99); }},
      {"errors", "errors (failed requests)", K::Count, [](R s) { return std::optional(double(s.failed)); }},
      {"failure_rate", "failure rate", K::Fraction, [](R s) { return std::optional(s.failure_rate); }},
      {"evictions", "evictions", K::Count, [](R s) { return std::optional(double(s.eviction_count)); }},
      {"reseeds", "reseeds", K::Count, [](R s) { return std::optional(double(s.reseeds)); }},
      {"token_imbalance", "token imbalance (max/min served)", K::Ratio, [](R s) { return s.token_imbalance; }},
      // The lab's own (LabMetrics.h).
      {"apc", "prefix-cache hit rate (APC)", K::Fraction, [](R s) { return s.lab.apc; }},
      {"tpot_p90_s", "TPOT p90 (s)", K::Seconds,
       [](R s) { return s.lab.tpot_s ? std::optional(s.lab.tpot_s->p90) : std::nullopt; }},
      {"uncached_tokens_p90", "uncached tokens p90", K::Count,
       [](R s) { return s.lab.uncached_tokens ? std::optional(s.lab.uncached_tokens->p90) : std::nullopt; }},
      {"worker_ttft_p90_max_s", "worker TTFT p90, max (s)", K::Seconds,
       [](R s) { return s.lab.worker_ttft_p90_max_s; }},
      {"request_balance", "request balance (max/min)", K::Ratio, [](R s) { return s.lab.request_balance; }},
      {"decode_tps", "decode tokens/s", K::Count, [](R s) { return s.lab.decode_tps; }},
      {"completion_rate", "completion rate", K::Fraction, [](R s) { return s.lab.completion_rate; }},
      {"wall_amplification", "wall amplification", K::Ratio, [](R s) { return s.lab.wall_amplification; }},
  };
  for (const auto& id : worker_ids)
    m.push_back({"share_" + id, id + " share of bindings", K::Fraction, [id](R s) -> std::optional<double> {
                   for (const auto& w : s.workers)
                     if (w.id == id) return w.share;
                   return std::nullopt;
                 }});
  return m;
}

}  // namespace kvscope
