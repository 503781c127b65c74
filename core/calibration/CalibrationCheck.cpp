#include "core/calibration/CalibrationCheck.h"

#include <cmath>
#include <cstdio>

#include "core/model/Error.h"
#include "core/model/NumberText.h"

namespace kvscope {

namespace {
std::string interval(const MeanInterval& m, const char* f) {
  if (!m.hasInterval()) return "(no interval: n < 2)";
  return "[" + formatNumber(f, m.lower) + ", " + formatNumber(f, m.upper) + "]";
}
std::string pct(double v) { return std::isfinite(v) ? formatNumber("%+.1f%%", 100 * v) : "n/a"; }
}  // namespace

CheckResult CalibrationCheck::run(const Scenario& scenario, const CalibrationTarget& target,
                                  const std::vector<std::pair<std::string, std::string>>& pairs,
                                  const CandidateRuns& runs, const std::atomic<bool>& cancel,
                                  const std::function<void(double)>& progress) {
  for (const auto& [a, b] : pairs)
    for (const auto& label : {a, b})
      if (!target.row(label)) throw InputError("--pair " + a + ":" + b + ": no row '" + label + "' in the target");
  const auto row_runs = runs.run(scenario, target.rows, cancel, progress);
  CheckResult out;
  out.seeds = runs.seeds().size();
  for (auto s : runs.seeds()) out.seed_list += (out.seed_list.empty() ? "" : ", ") + std::to_string(s);
  for (std::size_t r = 0; r < target.rows.size(); ++r) {
    const TargetRow& row = target.rows[r];
    for (const auto& [metric, measured] : row.metrics) {
      CheckedMetric m{row.label, metric, measured, {}, false};
      const auto values = row_runs[r].metric(metric);
      if (!values.empty()) m.predicted = MeanInterval::ofPositive(values);
      out.metrics.push_back(m);
    }
    for (std::size_t d = 0; d < row.decode_shares.size(); ++d)
      out.metrics.push_back({row.label, "decode_share[" + std::to_string(d) + "]", row.decode_shares[d],
                             MeanInterval::ofPositive(row_runs[r].share(d)), true});
  }
  auto indexOf = [&](const std::string& label) {
    for (std::size_t r = 0; r < target.rows.size(); ++r)
      if (target.rows[r].label == label) return r;
    return std::size_t{0};
  };
  for (const auto& [a, b] : pairs) {
    const std::size_t ia = indexOf(a), ib = indexOf(b);
    for (const auto& [metric, ma] : target.rows[ia].metrics) {
      const auto it = target.rows[ib].metrics.find(metric);
      if (it == target.rows[ib].metrics.end()) continue;
      const auto va = row_runs[ia].metric(metric), vb = row_runs[ib].metric(metric);
      CheckedPair p{a, b, metric, ma / it->second - 1, {}};
      if (!va.empty() && va.size() == vb.size()) {
        std::vector<double> ratios;
        for (std::size_t k = 0; k < va.size(); ++k) ratios.push_back(vb[k] > 0 ? va[k] / vb[k] - 1 : NAN);
        p.predicted = MeanInterval::of(ratios);
      }
      out.pairs.push_back(p);
    }
  }
  return out;
}

std::string CalibrationCheck::table(const CheckResult& r, const std::string& scenario,
                                    const CalibrationTarget& target) {
  std::string out = "calibrate check: scenario " + scenario + " against " + target.file +
                    (target.source.empty() ? "" : " (" + target.source + ")") + "\n";
  out += "n = " + std::to_string(r.seeds) + " seeds (" + r.seed_list +
         "); predicted = mean over the seeds [95% CI, log scale]; shares in %, their errors in percentage points\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-22s %12s %12s %-24s %10s\n", "row", "metric", "measured", "predicted",
                "95% CI (log scale)", "error");
  out += line;
  for (const auto& m : r.metrics) {
    // Shares print as percentages, their errors in percentage points.
    const double k = m.share ? 100 : 1;
    const char* f = m.share ? "%.1f%%" : "%.3f";
    const std::string pred = m.predicted.n > 0 ? formatNumber(f, k * m.predicted.mean) : "n/a";
    const std::string err = m.predicted.n == 0 ? "n/a"
                            : m.share          ? formatNumber("%+.1f pts", 100 * m.error())
                                               : pct(m.error());
    MeanInterval ci = m.predicted;
    ci.lower *= k;
    ci.upper *= k;
    std::snprintf(line, sizeof line, "%-12s %-22s %12s %12s %-24s %10s\n", m.row.c_str(), m.metric.c_str(),
                  formatNumber(f, k * m.measured).c_str(), pred.c_str(), interval(ci, f).c_str(), err.c_str());
    out += line;
  }
  if (!r.pairs.empty()) {
    out += "\nrelative difference A vs B (A / B - 1); predicted = mean of the per-seed ratios over n = " +
           std::to_string(r.seeds) + " paired seeds [95% CI, Student t]\n";
    std::snprintf(line, sizeof line, "%-24s %-14s %10s %10s %-22s %12s\n", "A vs B", "metric", "measured", "predicted",
                  "95% CI (Student t)", "pred - meas");
    out += line;
    for (const auto& p : r.pairs) {
      const std::string ci = p.predicted.hasInterval()
                                 ? "[" + pct(p.predicted.lower) + ", " + pct(p.predicted.upper) + "]"
                                 : "(no interval: n < 2)";
      std::snprintf(line, sizeof line, "%-24s %-14s %10s %10s %-22s %12s\n", (p.a + " vs " + p.b).c_str(),
                    p.metric.c_str(), pct(p.measured).c_str(), p.predicted.n ? pct(p.predicted.mean).c_str() : "n/a",
                    ci.c_str(),
                    p.predicted.n ? formatNumber("%+.1f pts", 100 * (p.predicted.mean - p.measured)).c_str() : "n/a");
      out += line;
    }
  }
  return out;
}

}  // namespace kvscope
