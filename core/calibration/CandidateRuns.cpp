#include "core/calibration/CandidateRuns.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "core/run/ParallelJobs.h"
#include "core/run/SimulationRun.h"

namespace kvscope {

std::vector<double> RowRuns::metric(const std::string& name) const {
  std::vector<double> out;
  for (const auto& r : runs) {
    const auto v = CalibrationTarget::metricOf(r, name);
    if (!v) return {};
    out.push_back(*v);
  }
  return out;
}

std::vector<double> RowRuns::share(std::size_t d) const {
  std::vector<double> out;
  for (const auto& r : runs) {
    const auto s = CalibrationTarget::decodeSharesOf(r);
    out.push_back(d < s.size() ? s[d] : 0.0);
  }
  return out;
}

double meanOf(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

std::vector<RowRuns> CandidateRuns::run(const Scenario& scenario, const std::vector<TargetRow>& rows,
                                        const std::atomic<bool>& cancel,
                                        const std::function<void(double)>& progress) const {
  std::vector<RowRuns> out(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out[r].label = rows[r].label;
    out[r].runs.resize(seeds_.size());
  }
  const std::size_t total = rows.size() * seeds_.size();
  std::vector<double> fraction(total, 0.0);
  std::mutex mutex;
  std::exception_ptr failure;
  std::atomic<bool> stop{false};
  auto report = [&] {  // mutex held
    if (!progress) return;
    double done = 0;
    for (double f : fraction) done += f;
    progress(done / static_cast<double>(total));
  };
  const unsigned threads = jobs_ ? jobs_ : std::thread::hardware_concurrency();
  runParallelJobs(
      total, threads, [&] { return !stop.load() && !cancel.load(); },
      [&](std::size_t t) {
        const std::size_t r = t / seeds_.size(), k = t % seeds_.size();
        SimulationOptions o;
        o.policy = rows[r].policy;
        o.knobs = rows[r].knobs;
        o.seed = seeds_[k];
        o.duration_s = duration_s_;
        o.progress = [&, t](double sim, double end) {
          if (cancel.load() || stop.load()) throw RunsCancelled{};
          std::lock_guard lock(mutex);
          fraction[t] = end > 0 ? std::min(1.0, sim / end) : 0;
          report();
        };
        try {
          RunSummary s = runSimulation(scenario, o);
          std::lock_guard lock(mutex);
          out[r].runs[k] = std::move(s);
          fraction[t] = 1;
          report();
        } catch (const RunsCancelled&) {
          // cancelled or stopped: no job starts after this one
        } catch (...) {
          std::lock_guard lock(mutex);
          if (!failure) failure = std::current_exception();
          stop = true;
        }
      });
  if (failure) std::rethrow_exception(failure);
  if (cancel.load()) throw RunsCancelled{};
  return out;
}

}  // namespace kvscope
