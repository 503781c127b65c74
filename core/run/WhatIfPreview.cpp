#include "core/run/WhatIfPreview.h"

#include <array>
#include <chrono>
#include <thread>

#include "core/metrics/SummaryCollector.h"
#include "core/sim/ClusterSimulator.h"

namespace kvscope {

namespace {

// Keeps what a preview draws and sums up, from `from` on: every per-worker gauge of each decode
// worker, finished requests' latencies, and the horizon's summary (RunStarted is passed so it knows
// the workers; before `from` only the admissions, which the cumulative gauge counts from the start).
class FutureSink : public EventSink {
 public:
  FutureSink(WhatIfFuture& out, SimTime from) : out_(out), from_(from) {
    for (int g = 0; g < kWorkerGaugeCount; ++g) series_[g] = &out_.per_worker[gaugeKey(static_cast<WorkerGauge>(g))];
  }

  void onEvent(const Event& e) override {
    if (const auto* r = std::get_if<RunStarted>(&e.payload)) {
      for (std::size_t i = 0; i < r->workers.size(); ++i) {
        if (r->workers[i].role == WorkerRole::Prefill) continue;
        slot_.resize(r->workers.size(), -1);
        slot_[i] = static_cast<int>(out_.workers.size());
        out_.workers.push_back(r->workers[i].name);
        admitted_.push_back(0);
        for (std::vector<MinMaxSeries>* s : series_) s->emplace_back(1024, 4, 4, 4096);
      }
      summary_.onEvent(e);
      return;
    }
    if (const auto* a = std::get_if<Admission>(&e.payload); a && a->result == AdmissionResult::Admitted)
      if (const int k = slotOf(a->worker); k >= 0) ++admitted_[static_cast<std::size_t>(k)];
    if (e.time < from_) return;
    summary_.onEvent(e);
    if (const auto* s = std::get_if<Snapshot>(&e.payload)) {
      for (const WorkerGauges& g : s->workers) {
        const int k = slotOf(g.worker);
        if (k < 0) continue;
        const auto slot = static_cast<std::size_t>(k);
        for (int gauge = 0; gauge < kWorkerGaugeCount; ++gauge)
          if (const auto sample = gaugeSample(static_cast<WorkerGauge>(gauge), g, admitted_[slot]))
            (*series_[gauge])[slot].add(e.time, sample->value, sample->peak);
      }
    } else if (const auto* d = std::get_if<RequestDone>(&e.payload)) {
      if (d->status == RequestStatus::Ok) {
        if (d->ttft >= 0) out_.ttft.add(e.time, timeToSeconds(d->ttft));
        out_.e2e.add(e.time, timeToSeconds(d->e2e));
      }
    }
  }

  RunSummary summary() const { return summary_.summary(); }

 private:
  int slotOf(WorkerId worker) const {
    return worker < 0 || static_cast<std::size_t>(worker) >= slot_.size() ? -1
                                                                          : slot_[static_cast<std::size_t>(worker)];
  }

  WhatIfFuture& out_;
  SimTime from_;
  std::array<std::vector<MinMaxSeries>*, kWorkerGaugeCount> series_{};
  std::vector<int> slot_;       // run worker index -> decode slot (-1 for prefill)
  std::vector<long> admitted_;  // per decode slot: bindings admitted since the run's start
  SummaryCollector summary_;
};

std::string applyStep(ClusterSimulator& sim, const ControlStep& step, const std::string& who) {
  if (!step.knobs.empty()) {
    const KnobRegistry::Result r = sim.applyKnobs(step.knobs, who);
    if (!r.ok) return r.error;
  }
  if (step.policy && !sim.setPolicy(*step.policy, who)) return "unknown policy '" + *step.policy + "'";
  return {};
}

}  // namespace

void appendControlStep(std::vector<ControlStep>& steps, const Event& e) {
  const auto* k = std::get_if<KnobChanged>(&e.payload);
  const auto* p = std::get_if<PolicyChanged>(&e.payload);
  if (!k && !p) return;
  if (steps.empty() || steps.back().time != e.time) steps.push_back(ControlStep{e.time, {}, {}});
  if (k) steps.back().knobs[k->name] = k->new_value;
  if (p) steps.back().policy = p->new_policy;
}

const std::vector<MinMaxSeries>* WhatIfFuture::perWorker(WorkerGauge gauge) const {
  const auto it = per_worker.find(gaugeKey(gauge));
  return it == per_worker.end() ? nullptr : &it->second;
}

WhatIfPreview::WhatIfPreview(const PreparedRun& run, std::vector<ControlStep> history)
    : run_(run), history_(std::move(history)) {}

WhatIfFuture WhatIfPreview::branch(SimTime now, SimTime horizon, const ControlStep* change,
                                   const std::atomic<bool>* cancel) const {
  WhatIfFuture future;
  FutureSink sink(future, now);
  ClusterSimulator sim(run_.scenario, run_.workload, run_.scenario.seed);
  sim.addSink(&sink);
  sim.start();
  auto cancelled = [&] { return cancel && cancel->load(std::memory_order_relaxed); };
  // The run's past, with its changes where they happened (a refused one was refused then too).
  for (const ControlStep& step : history_) {
    if (step.time >= now) break;
    sim.runUntil(step.time);
    applyStep(sim, step, "history");
    if (cancelled()) return future;
  }
  sim.runUntil(now);
  if (change) {
    future.error = applyStep(sim, *change, "preview");
    if (!future.error.empty()) return future;
  }
  // In slices, so a cancel (a newer pending value) is seen quickly.
  const SimTime end = std::min(now + horizon, sim.endTime());
  for (SimTime t = now; t < end && !cancelled();) {
    t = std::min(end, t + secondsToTime(30));
    sim.runUntil(t);
  }
  future.horizon = sink.summary();
  return future;
}

WhatIfResult WhatIfPreview::run(SimTime now, SimTime horizon, const ControlStep& change,
                                const std::atomic<bool>* cancel) const {
  const auto start = std::chrono::steady_clock::now();
  WhatIfResult result;
  result.from = now;
  result.to = now + horizon;
  std::thread without([&] { result.without = branch(now, horizon, nullptr, cancel); });
  result.with = branch(now, horizon, &change, cancel);
  without.join();
  result.cancelled = cancel && cancel->load();
  result.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kvscope
