#include "core/sweep/SweepReport.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/AtomicFile.h"
#include "core/model/NumberText.h"
#include "core/stats/SignFlipTest.h"

namespace kvscope {

namespace {

// A CSV field: quoted when it holds a comma, a quote or a newline.
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

nlohmann::json numberOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// A paired comparison for a program: the old fields (name, pairs, mean_difference, p_value, verdict)
// as before, then what section 4's verdicts add.
nlohmann::json comparisonJson(const PairedComparison& c) {
  nlohmann::json j = {{"name", toString(c.test)},
                      {"pairs", c.pairs},
                      {"mean_difference", c.mean_difference},
                      {"p_value", numberOrNull(c.p_value)},
                      {"verdict", toString(c.verdict)},
                      {"verdict_text", c.verdictText()},
                      {"description", c.testText()},
                      {"differing", c.differing},
                      {"smallest_p", c.smallest_p},
                      {"seeds_needed", c.seeds_needed},
                      {"level", c.level},
                      {"wilcoxon_p", numberOrNull(c.wilcoxon_p)},
                      {"wilcoxon_exact", c.wilcoxon_exact},
                      {"summary", c.summary()}};
  if (c.difference_ci)
    j["difference_ci95"] = {{"low", c.difference_ci->ci_low},
                            {"high", c.difference_ci->ci_high},
                            {"method", "percentile bootstrap"},
                            {"resamples", c.difference_ci->resamples}};
  else
    j["difference_ci95"] = nullptr;
  return j;
}

const char* kTwoPolicyMetrics[] = {"e2e_mean_s", "e2e_p50_s", "e2e_p90_s", "ttft_p90_s", "errors"};

}  // namespace

std::string SweepReport::meanCell(std::size_t p, std::size_t m) const {
  const MetricCell& c = a_.cells[p][m];
  const SweepMetric& metric = a_.metrics[m];
  if (c.values.empty()) return "-";
  std::string out = metric.format(c.interval.mean);
  if (c.interval.hasInterval()) {
    out += " [" + metric.format(c.interval.low()) + ", " + metric.format(c.interval.high()) + "]";
  } else {
    out += " (n=1, no interval)";
  }
  return out;
}

std::string SweepReport::changeCell(std::size_t p, std::size_t m) const {
  if (p == data_.baseline) return "baseline";
  const MetricCell& c = a_.cells[p][m];
  if (!c.change_pct) {
    if (c.values.empty()) return "-";
    return a_.cells[data_.baseline][m].values.empty() ? "n/a (no baseline value)" : "n/a (baseline 0)";
  }
  return formatNumber("%+.1f%%", *c.change_pct);
}

std::string SweepReport::pCell(std::size_t p, std::size_t m) const {
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp || cmp->pairs == 0) return "-";
  return pValueCell(cmp->p_value);
}

std::string SweepReport::smallestPCell(std::size_t p, std::size_t m) const {
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp || cmp->pairs == 0) return "-";
  return pValueCell(cmp->smallest_p);
}

std::string SweepReport::wilcoxonCell(std::size_t p, std::size_t m) const {
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp || cmp->pairs == 0) return "-";
  return pValueCell(cmp->wilcoxon_p) + (cmp->wilcoxon_exact ? "" : " (approx.)");
}

std::string SweepReport::pairsCell(std::size_t p, std::size_t m) const {
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp) return "-";
  std::string out = std::to_string(cmp->pairs);
  if (cmp->differing < cmp->pairs) out += " (" + std::to_string(cmp->differing) + " differ)";
  return out;
}

std::string SweepReport::testCell(std::size_t p, std::size_t m) const {
  if (p == data_.baseline) return "-";
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp) return data_.paired ? "-" : "unpaired: no test";
  if (cmp->pairs == 0) return "-";
  return cmp->test == PairedTest::None ? std::string("- (no pair differs)") : cmp->testText();
}

std::string SweepReport::verdictCell(std::size_t p, std::size_t m) const {
  if (p == data_.baseline) return "-";
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp) return data_.paired ? "-" : "unpaired";
  return cmp->verdictText();
}

std::string SweepReport::perWorkerTable() const {
  std::string out = "## Per-D bindings (mean across seeds)\n\n| point |";
  std::string rule = "|---|";
  for (const auto& id : a_.worker_ids) {
    out += " " + id + " bindings | " + id + " share | " + id + " sessions |";
    rule += "---:|---:|---:|";
  }
  out += "\n" + rule + "\n";
  for (std::size_t p = 0; p < data_.points.size(); ++p) {
    out += "| " + data_.points[p].label() + " |";
    for (const auto& w : a_.workers[p])
      out += w.present ? " " + formatNumber("%.1f", w.bindings) + " | " + formatNumber("%.1f%%", w.share * 100) +
                             " | " + formatNumber("%.1f", w.sessions) + " |"
                       : " - | - | - |";
    out += "\n";
  }
  return out + "\n";
}

std::string SweepReport::twoPolicyTable() const {
  if (!a_.two_policy_other) return {};
  const std::size_t b = data_.baseline, o = *a_.two_policy_other;
  const std::string bn = data_.points[b].policy, on = data_.points[o].policy;
  std::string out = "## " + on + " vs " + bn + "\n\n";
  out += "| metric | " + bn + " (baseline) | " + on +
         " | change % | pairs | test | p | smallest p | Wilcoxon p | verdict |\n";
  out += "|---|---:|---:|---:|---:|---|---:|---:|---:|---|\n";
  for (const char* key : kTwoPolicyMetrics) {
    const std::size_t m = a_.metricIndex(key);
    if (m >= a_.metrics.size()) continue;
    out += "| " + a_.metrics[m].label + " | " + meanCell(b, m) + " | " + meanCell(o, m) + " | " + changeCell(o, m) +
           " | " + pairsCell(o, m) + " | " + testCell(o, m) + " | " + pCell(o, m) + " | " + smallestPCell(o, m) +
           " | " + wilcoxonCell(o, m) + " | " + verdictCell(o, m) + " |\n";
  }
  return out + "\n";
}

// "none" for a sweep with no point (an empty grid's report, or one read back from a bare directory).
std::string SweepReport::baselineLabel() const {
  return data_.baseline < data_.points.size() ? data_.points[data_.baseline].label() : "none";
}

std::string SweepReport::markdown() const {
  std::string out = "# " + data_.heading + ": " + data_.scenario + "\n\n";
  out += "- points: " + std::to_string(data_.points.size()) + "; baseline: " + baselineLabel() + "\n";
  std::string seeds;
  for (auto s : data_.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  out += "- seeds: " + seeds + (data_.paired ? " (paired: every point ran the same seeds)" : " (unpaired)") + "\n";
  out +=
      "- cells: mean [95% confidence interval] across seeds, on a log scale (mean ×/÷ exp(t·SE/mean)): "
      "these metrics are never negative and neither is the interval\n";
  const int needed = SignFlipTest::pairsNeeded(data_.level);
  out +=
      "- change: against the baseline's mean. Test on the per-seed pairs, two-sided: the exact sign-flip "
      "permutation test of the mean difference (all 2^n sign patterns up to " +
      std::to_string(SignFlipTest::kExactMaxPairs) + " differing pairs, else " +
      std::to_string(SignFlipTest::kSamples) + " sampled from seed " + std::to_string(SignFlipTest::kSeed) +
      "); pairs with no difference are dropped. Wilcoxon signed-rank p beside it (exact up to 20 tied / 50 "
      "untied pairs). n pairs can give no p below 2/2^n (\"smallest p\"): at level " +
      formatNumber("%g", data_.level) + " a verdict needs >= " + std::to_string(needed) +
      " differing pairs; with fewer it says so instead of \"significant\"\n";
  for (const auto& n : data_.notes) out += "- " + n + "\n";
  out += "\n";
  out += twoPolicyTable();
  out += perWorkerTable();
  for (std::size_t m = 0; m < a_.metrics.size(); ++m) {
    out += "## " + a_.metrics[m].label + "\n\n";
    out +=
        "| point | runs | mean [95% CI] | change | pairs | test | p | smallest p | Wilcoxon p | verdict |\n"
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---|\n";
    for (std::size_t p = 0; p < data_.points.size(); ++p)
      out += "| " + data_.points[p].label() + " | " + std::to_string(a_.cells[p][m].values.size()) + " | " +
             meanCell(p, m) + " | " + changeCell(p, m) + " | " + pairsCell(p, m) + " | " + testCell(p, m) + " | " +
             pCell(p, m) + " | " + smallestPCell(p, m) + " | " + wilcoxonCell(p, m) + " | " + verdictCell(p, m) +
             " |\n";
    out += "\n";
  }
  return out;
}

std::string SweepReport::csv() const {
  std::string out = "point";
  std::vector<std::string> axes;
  if (!data_.points.empty())
    for (const auto& [axis, value] : data_.points.front().coords) axes.push_back(axis);
  for (const auto& axis : axes) out += "," + csvField(axis);
  // New columns go at the end: spreadsheets and scripts that read the old ones by position still work.
  out +=
      ",metric,runs,mean,ci_low,ci_high,change_pct,test,p_value,verdict,level,ci_scale,pairs,differing,"
      "smallest_p,wilcoxon_p,seeds_needed,verdict_text,diff_ci_low,diff_ci_high\n";
  for (std::size_t p = 0; p < data_.points.size(); ++p)
    for (std::size_t m = 0; m < a_.metrics.size(); ++m) {
      const MetricCell& c = a_.cells[p][m];
      out += csvField(data_.points[p].label());
      for (std::size_t i = 0; i < axes.size(); ++i)
        out += "," + csvField(i < data_.points[p].coords.size() ? data_.points[p].coords[i].second : "");
      auto num = [](double v) { return std::isfinite(v) ? formatNumber("%.10g", v) : std::string(); };
      out += "," + a_.metrics[m].key + "," + std::to_string(c.values.size());
      out += "," + (c.values.empty() ? "" : num(c.interval.mean));
      out += "," + (c.interval.hasInterval() ? num(c.interval.low()) : "");
      out += "," + (c.interval.hasInterval() ? num(c.interval.high()) : "");
      out += "," + (c.change_pct ? num(*c.change_pct) : "");
      out += "," + (c.comparison ? csvField(std::string(toString(c.comparison->test))) : "");
      out += "," + (c.comparison ? num(c.comparison->p_value) : "");
      out += "," + (c.comparison ? std::string(toString(c.comparison->verdict)) : "");
      out += "," + formatNumber("%g", data_.level);
      out += "," + (c.interval.hasInterval() ? std::string(toString(c.interval.scale)) : std::string());
      const auto& cmp = c.comparison;
      out += "," + (cmp ? std::to_string(cmp->pairs) : "") + "," + (cmp ? std::to_string(cmp->differing) : "");
      out += "," + (cmp ? num(cmp->smallest_p) : "") + "," + (cmp ? num(cmp->wilcoxon_p) : "");
      out += "," + (cmp ? std::to_string(cmp->seeds_needed) : "") + "," + (cmp ? csvField(cmp->verdictText()) : "");
      out += "," + (cmp && cmp->difference_ci ? num(cmp->difference_ci->ci_low) : "");
      out += "," + (cmp && cmp->difference_ci ? num(cmp->difference_ci->ci_high) : "") + "\n";
    }
  return out;
}

nlohmann::json SweepReport::json() const {
  using nlohmann::json;
  json j;
  j["scenario"] = data_.scenario;
  j["level"] = data_.level;
  j["paired"] = data_.paired;
  j["seeds"] = data_.seeds;
  j["baseline"] = baselineLabel();
  j["notes"] = data_.notes;
  j["points"] = json::array();
  for (std::size_t p = 0; p < data_.points.size(); ++p) {
    const SweepPoint& pt = data_.points[p];
    json jp;
    jp["label"] = pt.label();
    jp["coords"] = json::object();
    for (const auto& [axis, value] : pt.coords) jp["coords"][axis] = value;
    jp["runs_done"] = a_.runs_done[p];
    jp["runs"] = json::array();
    for (std::size_t k = 0; k < data_.seeds.size(); ++k) {
      const bool have = k < data_.runs[p].size() && data_.runs[p][k].has_value();
      std::string rec = p < data_.recordings.size() && k < data_.recordings[p].size() ? data_.recordings[p][k] : "";
      jp["runs"].push_back({{"seed", data_.seeds[k]}, {"done", have}, {"recording", rec}});
    }
    jp["metrics"] = json::object();
    for (std::size_t m = 0; m < a_.metrics.size(); ++m) {
      const MetricCell& c = a_.cells[p][m];
      json jm;
      jm["values"] = c.values;
      jm["n"] = c.values.size();
      jm["mean"] = c.values.empty() ? json(nullptr) : json(c.interval.mean);
      jm["ci95_low"] = c.interval.hasInterval() ? json(c.interval.low()) : json(nullptr);
      jm["ci95_high"] = c.interval.hasInterval() ? json(c.interval.high()) : json(nullptr);
      jm["ci95_scale"] = c.interval.hasInterval() ? json(toString(c.interval.scale)) : json(nullptr);
      jm["change_pct"] = c.change_pct ? json(*c.change_pct) : json(nullptr);
      if (c.comparison)
        jm["test"] = comparisonJson(*c.comparison);
      else
        jm["test"] = nullptr;
      jp["metrics"][a_.metrics[m].key] = jm;
    }
    jp["workers"] = json::array();
    for (std::size_t w = 0; w < a_.worker_ids.size(); ++w) {
      const WorkerCell& wc = a_.workers[p][w];
      if (!wc.present) continue;
      jp["workers"].push_back(
          {{"id", a_.worker_ids[w]}, {"bindings", wc.bindings}, {"share", wc.share}, {"sessions", wc.sessions}});
    }
    j["points"].push_back(jp);
  }
  if (a_.two_policy_other) {
    const std::size_t o = *a_.two_policy_other;
    json t;
    t["baseline"] = data_.points[data_.baseline].policy;
    t["other"] = data_.points[o].policy;
    t["rows"] = json::array();
    for (const char* key : kTwoPolicyMetrics) {
      const std::size_t m = a_.metricIndex(key);
      const MetricCell& c = a_.cells[o][m];
      t["rows"].push_back({{"metric", key},
                           {"baseline_mean", numberOrNull(a_.cells[data_.baseline][m].interval.mean)},
                           {"other_mean", numberOrNull(c.interval.mean)},
                           {"change_pct", c.change_pct ? json(*c.change_pct) : json(nullptr)},
                           {"p_value", c.comparison ? numberOrNull(c.comparison->p_value) : json(nullptr)},
                           {"verdict", c.comparison ? json(toString(c.comparison->verdict)) : json("unpaired")},
                           {"test", c.comparison ? comparisonJson(*c.comparison) : json(nullptr)}});
    }
    j["two_policy"] = t;
  }
  return j;
}

bool SweepReport::writeAll(const std::string& dir, std::string* error) const {
  namespace fs = std::filesystem;
  return AtomicFile::writeSet({{(fs::path(dir) / "summary.md").string(), markdown()},
                               {(fs::path(dir) / "summary.csv").string(), csv()},
                               {(fs::path(dir) / "summary.json").string(), json().dump(2) + "\n"}},
                              error);
}

}  // namespace kvscope
