#include "sweep/SweepReport.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "stats/PairedBootstrap.h"
#include "sweep/AtomicFile.h"

namespace kvscope {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pText(double p) {
  if (std::isnan(p)) return "-";
  if (p < 0.001) return fmt("%.1e", p);
  return fmt("%.3f", p);
}

// A CSV field: quoted when it holds a comma, a quote or a newline.
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

nlohmann::json numberOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

const char* kTwoPolicyMetrics[] = {"e2e_mean_s", "e2e_p50_s", "e2e_p90_s", "ttft_p90_s", "errors"};

}  // namespace

std::string SweepReport::meanCell(std::size_t p, std::size_t m) const {
  const MetricCell& c = a_.cells[p][m];
  const SweepMetric& metric = a_.metrics[m];
  if (c.values.empty()) return "-";
  std::string out = metric.format(c.interval.mean);
  if (c.interval.hasInterval()) {
    std::string hw = metric.format(c.interval.half_width);
    out += " ± " + hw;
  } else {
    out += " (n=1, no interval)";
  }
  return out;
}

std::string SweepReport::changeCell(std::size_t p, std::size_t m) const {
  if (p == data_.baseline) return "baseline";
  const MetricCell& c = a_.cells[p][m];
  if (!c.change_pct) return c.values.empty() ? "-" : "n/a (baseline 0)";
  return fmt("%+.1f%%", *c.change_pct);
}

std::string SweepReport::pCell(std::size_t p, std::size_t m) const {
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp) return "-";
  // No resample as extreme as what was seen: the bootstrap only bounds p by its resolution.
  const double floor = 1.0 / (PairedBootstrap::kDefaultResamples + 1);
  if (cmp->test == PairedTest::Bootstrap && cmp->p_value <= floor * (1 + 1e-9)) return "≤ " + pText(floor);
  return pText(cmp->p_value);
}

std::string SweepReport::testCell(std::size_t p, std::size_t m) const {
  if (p == data_.baseline) return "-";
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp) return data_.paired ? "-" : "unpaired: no test";
  std::string t(toString(cmp->test));
  if (cmp->test == PairedTest::Bootstrap) t += ", " + std::to_string(cmp->pairs) + " pairs";
  return t;
}

std::string SweepReport::verdictCell(std::size_t p, std::size_t m) const {
  if (p == data_.baseline) return "-";
  const auto& cmp = a_.cells[p][m].comparison;
  if (!cmp) return data_.paired ? "-" : "unpaired";
  std::string v(toString(cmp->verdict));
  if (cmp->verdict == Verdict::TooFewSeeds) v += " (" + std::to_string(cmp->pairs) + " pairs)";
  return v;
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
      out += w.present ? " " + fmt("%.1f", w.bindings) + " | " + fmt("%.1f%%", w.share * 100) + " | " +
                             fmt("%.1f", w.sessions) + " |"
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
  out += "| metric | " + bn + " (baseline) | " + on + " | change % | test | p | verdict |\n";
  out += "|---|---:|---:|---:|---|---:|---|\n";
  for (const char* key : kTwoPolicyMetrics) {
    const std::size_t m = a_.metricIndex(key);
    if (m >= a_.metrics.size()) continue;
    out += "| " + a_.metrics[m].label + " | " + meanCell(b, m) + " | " + meanCell(o, m) + " | " + changeCell(o, m) +
           " | " + testCell(o, m) + " | " + pCell(o, m) + " | " + verdictCell(o, m) + " |\n";
  }
  return out + "\n";
}

std::string SweepReport::markdown() const {
  std::string out = "# " + data_.heading + ": " + data_.scenario + "\n\n";
  out += "- points: " + std::to_string(data_.points.size()) + "; baseline: " + data_.points[data_.baseline].label() + "\n";
  std::string seeds;
  for (auto s : data_.seeds) seeds += (seeds.empty() ? "" : ", ") + std::to_string(s);
  out += "- seeds: " + seeds + (data_.paired ? " (paired: every point ran the same seeds)" : " (unpaired)") + "\n";
  out += "- cells: mean ± half-width of the 95% confidence interval across seeds (Student t)\n";
  out += "- change: against the baseline's mean; test and verdict at level " + fmt("%g", data_.level) +
         ", on the per-seed pairs: Wilcoxon signed-rank when the pairs allow it to reach the level "
         "(at least 6 non-zero pairs at 0.05), else a paired bootstrap (" +
         std::to_string(PairedBootstrap::kDefaultResamples) +
         " resamples, fixed seed; weaker evidence from 3-5 seeds); fewer than 3 pairs: too few seeds to claim anything\n";
  for (const auto& n : data_.notes) out += "- " + n + "\n";
  out += "\n";
  out += twoPolicyTable();
  out += perWorkerTable();
  for (std::size_t m = 0; m < a_.metrics.size(); ++m) {
    out += "## " + a_.metrics[m].label + "\n\n";
    out += "| point | runs | mean ± 95% CI | change | test | p | verdict |\n|---|---:|---:|---:|---|---:|---|\n";
    for (std::size_t p = 0; p < data_.points.size(); ++p)
      out += "| " + data_.points[p].label() + " | " + std::to_string(a_.cells[p][m].values.size()) + " | " +
             meanCell(p, m) + " | " + changeCell(p, m) + " | " + testCell(p, m) + " | " + pCell(p, m) + " | " +
             verdictCell(p, m) + " |\n";
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
  out += ",metric,runs,mean,ci_low,ci_high,change_pct,test,p_value,verdict,level\n";
  for (std::size_t p = 0; p < data_.points.size(); ++p)
    for (std::size_t m = 0; m < a_.metrics.size(); ++m) {
      const MetricCell& c = a_.cells[p][m];
      out += csvField(data_.points[p].label());
      for (std::size_t i = 0; i < axes.size(); ++i)
        out += "," + csvField(i < data_.points[p].coords.size() ? data_.points[p].coords[i].second : "");
      auto num = [](double v) { return std::isfinite(v) ? fmt("%.10g", v) : std::string(); };
      out += "," + a_.metrics[m].key + "," + std::to_string(c.values.size());
      out += "," + (c.values.empty() ? "" : num(c.interval.mean));
      out += "," + (c.interval.hasInterval() ? num(c.interval.low()) : "");
      out += "," + (c.interval.hasInterval() ? num(c.interval.high()) : "");
      out += "," + (c.change_pct ? num(*c.change_pct) : "");
      out += "," + (c.comparison ? csvField(std::string(toString(c.comparison->test))) : "");
      out += "," + (c.comparison ? num(c.comparison->p_value) : "");
      out += "," + (c.comparison ? std::string(toString(c.comparison->verdict)) : "");
      out += "," + fmt("%g", data_.level) + "\n";
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
  j["baseline"] = data_.points[data_.baseline].label();
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
      jm["change_pct"] = c.change_pct ? json(*c.change_pct) : json(nullptr);
      if (c.comparison)
        jm["test"] = {{"name", toString(c.comparison->test)},
                      {"pairs", c.comparison->pairs},
                      {"mean_difference", c.comparison->mean_difference},
                      {"p_value", numberOrNull(c.comparison->p_value)},
                      {"verdict", toString(c.comparison->verdict)}};
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
                           {"verdict", c.comparison ? json(toString(c.comparison->verdict)) : json("unpaired")}});
    }
    j["two_policy"] = t;
  }
  return j;
}

bool SweepReport::writeAll(const std::string& dir, std::string* error) const {
  namespace fs = std::filesystem;
  return AtomicFile::write((fs::path(dir) / "summary.md").string(), markdown(), error) &&
         AtomicFile::write((fs::path(dir) / "summary.csv").string(), csv(), error) &&
         AtomicFile::write((fs::path(dir) / "summary.json").string(), json().dump(2) + "\n", error);
}

}  // namespace kvscope
