#pragma once
// Runs bundled scenarios for the tests, optionally edited, and keeps what the tests look at.
#include <functional>
#include <string>
#include <vector>

#include "core/events/Event.h"
#include "core/metrics/RunSummary.h"
#include "core/run/SimulationRun.h"
#include "core/scenario/Scenario.h"

namespace kvscope::test {

// Keeps every event (for mechanism checks in tests).
struct EventLog : EventSink {
  std::vector<Event> events;
  void onEvent(const Event& e) override { events.push_back(e); }
  template <class T>
  std::vector<std::pair<SimTime, T>> all() const {
    std::vector<std::pair<SimTime, T>> out;
    for (const auto& e : events)
      if (const T* p = std::get_if<T>(&e.payload)) out.emplace_back(e.time, *p);
    return out;
  }
};

inline RunSummary simulate(const std::string& scenario, const std::function<void(Scenario&)>& edit = {},
                           SimulationOptions options = {}, EventLog* log = nullptr) {
  Scenario s = Scenario::load(scenario);
  if (edit) edit(s);
  if (log) options.sinks.push_back(log);
  return runSimulation(s, options);
}

inline bool hasFinding(const RunSummary& s, const std::string& mode) {
  for (const auto& f : s.diagnosis)
    if (f.mode == mode) return true;
  return false;
}

inline double share(const RunSummary& s, const std::string& worker) {
  for (const auto& w : s.workers)
    if (w.id == worker) return w.share;
  return -1;
}

// Failure rate of the requests that arrived in [from_s, to_s).
inline double failureRateByArrival(const EventLog& log, double from_s, double to_s, long* count = nullptr) {
  long done = 0, failed = 0;
  for (const auto& [t, d] : log.all<RequestDone>()) {
    const double arrival = timeToSeconds(t - d.e2e);
    if (arrival < from_s || arrival >= to_s) continue;
    ++done;
    failed += d.status != RequestStatus::Ok;
  }
  if (count) *count = done;
  return done > 0 ? static_cast<double>(failed) / static_cast<double>(done) : 0;
}

}  // namespace kvscope::test
