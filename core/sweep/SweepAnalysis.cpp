#include "core/sweep/SweepAnalysis.h"

#include <algorithm>
#include <cmath>

namespace kvscope {

namespace {

// values[p][m][k]: metric m of point p at seed k, when that run exists and has it.
using Values = std::vector<std::vector<std::vector<std::optional<double>>>>;

// Each point's change against the baseline, per metric, and (paired runs) the paired comparison on
// the seeds both have.
void compareToBaseline(SweepAnalysis& a, const SweepData& data, const Values& values) {
  const std::size_t np = data.points.size(), ns = data.seeds.size(), nm = a.metrics.size();
  for (std::size_t p = 0; p < np; ++p) {
    if (p == data.baseline) continue;
    for (std::size_t m = 0; m < nm; ++m) {
      MetricCell& c = a.cells[p][m];
      const MetricCell& b = a.cells[data.baseline][m];
      if (!c.values.empty() && !b.values.empty() && b.interval.mean != 0)
        c.change_pct = (c.interval.mean - b.interval.mean) / std::abs(b.interval.mean) * 100;
      else if (!c.values.empty() && !b.values.empty() && c.interval.mean == 0)
        c.change_pct = 0.0;  // 0 against 0: no change (a change from 0 to anything has no percentage)
      if (!data.paired) continue;
      std::vector<double> base, cand;  // only the seeds both points have: the pairs stay pairs
      for (std::size_t k = 0; k < ns; ++k)
        if (values[data.baseline][m][k] && values[p][m][k]) {
          base.push_back(*values[data.baseline][m][k]);
          cand.push_back(*values[p][m][k]);
        }
      // Every seed the same run on both sides (a recorded workload, a policy that draws nothing):
      // one run, repeated; its repeats are no pairs.
      const bool replicas = base.size() > 1 &&
                            std::all_of(base.begin(), base.end(), [&](double v) { return v == base[0]; }) &&
                            std::all_of(cand.begin(), cand.end(), [&](double v) { return v == cand[0]; });
      const int seeds_run = static_cast<int>(base.size());
      if (replicas) {
        base.resize(1);
        cand.resize(1);
      }
      c.comparison = PairedComparison::compare(base, cand, data.level);
      if (replicas) c.comparison->replicated_seeds = seeds_run;
    }
  }
}

// Each worker's bindings, share and sessions per point, averaged over the runs that have the worker.
void averageWorkers(SweepAnalysis& a, const SweepData& data) {
  const std::size_t np = data.points.size();
  a.workers.assign(np, std::vector<WorkerCell>(a.worker_ids.size()));
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t w = 0; w < a.worker_ids.size(); ++w) {
      WorkerCell& cell = a.workers[p][w];
      double n = 0;
      for (const auto& run : data.runs[p]) {
        if (!run) continue;
        for (const auto& ws : run->workers)
          if (ws.id == a.worker_ids[w]) {
            cell.bindings += static_cast<double>(ws.bindings);
            cell.share += ws.share;
            cell.sessions += static_cast<double>(ws.sessions);
            n += 1;
          }
      }
      if (n > 0) {
        cell.present = true;
        cell.bindings /= n;
        cell.share /= n;
        cell.sessions /= n;
      }
    }
}

}  // namespace

std::size_t SweepAnalysis::metricIndex(const std::string& key) const {
  for (std::size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].key == key) return i;
  return metrics.size();
}

SweepAnalysis SweepAnalysis::of(const SweepData& data) {
  SweepAnalysis a;
  for (const auto& point : data.runs)
    for (const auto& run : point)
      if (run)
        for (const auto& w : run->workers)
          if (std::find(a.worker_ids.begin(), a.worker_ids.end(), w.id) == a.worker_ids.end())
            a.worker_ids.push_back(w.id);
  a.metrics = SweepMetric::all(a.worker_ids);
  const std::size_t np = data.points.size(), ns = data.seeds.size(), nm = a.metrics.size();

  // values[p][m][k]: metric m of point p at seed k, when that run exists and has it.
  Values values(np, std::vector<std::vector<std::optional<double>>>(nm, std::vector<std::optional<double>>(ns)));
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t k = 0; k < ns && k < data.runs[p].size(); ++k)
      if (const auto& run = data.runs[p][k])
        for (std::size_t m = 0; m < nm; ++m) values[p][m][k] = a.metrics[m].value(*run);

  a.cells.assign(np, std::vector<MetricCell>(nm));
  a.runs_done.assign(np, 0);
  for (std::size_t p = 0; p < np; ++p) {
    for (std::size_t k = 0; k < ns && k < data.runs[p].size(); ++k) a.runs_done[p] += data.runs[p][k] ? 1 : 0;
    for (std::size_t m = 0; m < nm; ++m) {
      MetricCell& c = a.cells[p][m];
      for (const auto& v : values[p][m])
        if (v) c.values.push_back(*v);
      // Every sweep metric is a latency, rate, count or ratio: its interval stays above zero.
      const bool positive = std::all_of(c.values.begin(), c.values.end(), [](double v) { return v >= 0; });
      c.interval = positive ? MeanInterval::ofPositive(c.values) : MeanInterval::of(c.values);
    }
  }
  compareToBaseline(a, data, values);
  averageWorkers(a, data);

  // The two-policy table: exactly two points that differ only in their policy.
  if (np == 2 && !data.points[0].coords.empty()) {
    bool only_policy = true;
    const auto& c0 = data.points[0].coords;
    const auto& c1 = data.points[1].coords;
    for (std::size_t i = 0; i < c0.size() && i < c1.size(); ++i)
      if (c0[i].second != c1[i].second && c0[i].first != "policy") only_policy = false;
    if (only_policy && data.points[0].policy != data.points[1].policy && !data.points[0].policy.empty())
      a.two_policy_other = data.baseline == 0 ? 1 : 0;
  }
  return a;
}

}  // namespace kvscope
