#include "core/telemetry/WorkerStateTracker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/model/NumberText.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

const char* toString(WorkerStateKind k) {
  switch (k) {
    case WorkerStateKind::Crashed:
      return "crashed";
    case WorkerStateKind::Unreachable:
      return "unreachable";
    case WorkerStateKind::Cold:
      return "cold";
    case WorkerStateKind::Degraded:
      return "degraded";
    case WorkerStateKind::Restarted:
      return "restarted";
    case WorkerStateKind::Evicting:
      return "evicting";
    case WorkerStateKind::Quiet:
      return "quiet";
    case WorkerStateKind::Idle:
      return "idle";
    case WorkerStateKind::Ok:
      return "ok";
  }
  return "?";
}

int severity(WorkerStateKind k) { return static_cast<int>(WorkerStateKind::Ok) - static_cast<int>(k); }

namespace {
std::string seconds(SimTime t) { return formatNumber("%.1f s", timeToSeconds(t)); }

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// P(X <= k) for X ~ Poisson(lambda).
double poissonAtMost(long k, double lambda) {
  double term = std::exp(-lambda), sum = term;
  for (long i = 1; i <= k; ++i) sum += term *= lambda / static_cast<double>(i);
  return std::min(1.0, sum);
}

// Bindings land on a fair D like a Poisson count with mean total x fair. A count is called low
// only when so low a count on any of the `workers` D would happen by chance under 1% of the time
// (Bonferroni): on 64 D a window of 400 bindings gives each about 6, and a 0 or 1 among 64 such
// counts is what chance does, not a cold D.
bool improbablyLow(long observed, long total, double fair, int workers) {
  return poissonAtMost(observed, static_cast<double>(total) * fair) * std::max(1, workers) < 0.01;
}

}  // namespace

void WorkerStateTracker::advanceEvictions(const TelemetryStore& store) {
  EvictionWindow& w = evictions_;
  if (w.run_id != store.runId()) {
    w = EvictionWindow{};
    w.run_id = store.runId();
  }
  const auto& events = store.discreteEvents();
  const std::uint64_t dropped = store.droppedEvents();
  for (std::uint64_t i = std::max(w.next, dropped); i < dropped + events.size(); ++i)
    if (const auto* ev = std::get_if<Eviction>(&events[static_cast<std::size_t>(i - dropped)].payload)) {
      w.held.emplace_back(events[static_cast<std::size_t>(i - dropped)].time, ev->worker);
      ++w.per_worker[ev->worker];
    }
  w.next = dropped + events.size();
  const SimTime from = store.now() - options_.eviction_window;
  for (; !w.held.empty() && w.held.front().first < from; w.held.pop_front())
    if (--w.per_worker[w.held.front().second] == 0) w.per_worker.erase(w.held.front().second);
}

struct WorkerStateTracker::Window {
  SimTime now = 0, start = 0;
  double seconds = 0;
  long total = 0;              // bindings in the window on the eligible workers
  long running_elsewhere = 0;  // requests running on the eligible workers, for the sticky cold D
  int eligible = 0;            // workers that could take bindings: the fair share is theirs
  double fair = 1.0;
  bool bindings_known = false;
  bool judge_load = false;  // no bindings known: the running-request gauges judge instead
  std::vector<double> load;
  double load_total = 0;
};

struct WorkerStateTracker::ColdSigns {
  bool judged_zero = false, starved = false, judged_low = false, load_cold = false, still_low = false;
};

WorkerStateTracker::ColdSigns WorkerStateTracker::coldSigns(const WorkerState& s, const WorkerSeries& w, std::size_t k,
                                                            const Window& win) const {
  const double fair = win.fair;
  const long total = win.total;
  const int eligible = win.eligible;
  ColdSigns c;
  c.judged_zero = s.recent_bindings == 0 && total >= 3L * eligible && improbablyLow(0, total, fair, eligible);
  // Sessions stick where they bound: once none are new, a cold D stays empty while the others
  // serve. No binding for a whole window, nothing running or resident, work elsewhere: cold.
  c.starved = s.recent_bindings == 0 && w.latest.running == 0 && w.latest.resident_sessions == 0 &&
              win.running_elsewhere > 0 && win.now - std::max<SimTime>(0, w.last_admitted) >= options_.window;
  c.judged_low = total >= options_.min_bindings_to_judge && s.recent_share < options_.cold_fraction * fair &&
                 improbablyLow(s.recent_bindings, total, fair, eligible);
  // Busy enough that every D would run one request were the load balanced, and this one far below.
  c.load_cold = win.judge_load && w.alive && win.load_total >= eligible &&
                win.load[k] / win.load_total < options_.cold_fraction * fair;
  // Hysteresis: a cold D stays cold until its share is back above twice the threshold, so a
  // worker near the line does not flick between cold and ok from one frame to the next.
  c.still_low =
      cold_.contains(s.worker) &&
      (win.judge_load ? win.load_total > 0 && win.load[k] / win.load_total < 2 * options_.cold_fraction * fair
                      : win.bindings_known && total > 0 && s.recent_share < 2 * options_.cold_fraction * fair);
  return c;
}

namespace {

// Each worker's mean running requests over the window, sampled evenly (a mean whatever the
// snapshot rate); crashed and unreachable workers are left at 0.
void measureLoad(const std::vector<WorkerSeries>& workers, const std::vector<WorkerState>& out,
                 const std::vector<std::string>& health_text, SimTime window_start, SimTime window,
                 std::vector<double>& load, double& load_total) {
  constexpr int kSamples = 24;  // evenly over the window: a mean, whatever the snapshot rate
  for (std::size_t k = 0; k < out.size(); ++k) {
    const WorkerSeries& w = workers[static_cast<std::size_t>(out[k].store_index)];
    if (!w.alive || startsWith(health_text[k], "unreachable")) continue;
    for (int i = 1; i <= kSamples; ++i)
      load[k] += w.gauge(WorkerGauge::Running).valueAt(window_start + window * i / kSamples, 0) / kSamples;
    load_total += load[k];
  }
}

}  // namespace

std::vector<WorkerState> WorkerStateTracker::update(const TelemetryStore& store,
                                                    const std::map<std::string, std::string>& health) {
  Window win;
  win.now = store.now();
  win.start = win.now - options_.window;
  win.seconds = timeToSeconds(options_.window);
  const SimTime now = win.now;
  const SimTime window_start = win.start;
  advanceEvictions(store);
  std::vector<WorkerState> out;
  std::vector<std::string> health_text;
  const auto& workers = store.workers();
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const WorkerSeries& w = workers[i];
    if (w.info.role == WorkerRole::Prefill) continue;
    WorkerState s;
    s.worker = w.info.name;
    s.store_index = static_cast<int>(i);
    const double then = window_start <= 0 ? 0 : w.gauge(WorkerGauge::Admitted).valueAt(window_start, 0);
    s.recent_bindings = std::max(0L, w.admitted - static_cast<long>(then));
    const auto h = health.find(w.info.name);
    std::string text = h == health.end() || h->second == "ok" ? std::string() : h->second;
    HealthSeen& seen = health_seen_[w.info.name];
    if (seen.text != text) seen = {text, now};
    const bool unreachable = startsWith(text, "unreachable");
    if (w.alive && !unreachable) {
      ++win.eligible;
      win.total += s.recent_bindings;
      win.running_elsewhere += w.latest.running;
    }
    health_text.push_back(std::move(text));
    out.push_back(std::move(s));
  }
  win.fair = win.eligible > 0 ? 1.0 / win.eligible : 1.0;
  // A live cluster watched without its router (or an import of its logs) reports no bindings at
  // all: then the workers' own running-request gauges say where the load went in the window.
  for (const WorkerSeries& w : workers) win.bindings_known |= w.last_admitted >= 0;
  win.load.assign(out.size(), 0);
  win.judge_load = !win.bindings_known && win.eligible > 1 && now >= options_.window;
  if (win.judge_load) measureLoad(workers, out, health_text, window_start, options_.window, win.load, win.load_total);
  for (std::size_t k = 0; k < out.size(); ++k)
    classify(out[k], workers[static_cast<std::size_t>(out[k].store_index)], health_text[k], k, win);
  return out;
}

void WorkerStateTracker::classify(WorkerState& s, const WorkerSeries& w, const std::string& text, std::size_t k,
                                  const Window& win) {
  const SimTime now = win.now;
  const double fair = win.fair;
  const long total = win.total;
  const int eligible = win.eligible;
  const SimTime health_since = health_seen_[s.worker].since;
  if (total > 0) s.recent_share = static_cast<double>(s.recent_bindings) / static_cast<double>(total);
  const auto [judged_zero, starved, judged_low, load_cold, still_low] = coldSigns(s, w, k, win);
  char buf[256];
  if (!w.alive) {
    s.kind = WorkerStateKind::Crashed;
    s.since = w.crashed_at;
    s.cause = w.crashed_at >= 0 ? "crashed " + seconds(w.crashed_at) : "crashed (reported down)";
    if (w.crashes > 1) s.cause += " (" + std::to_string(w.crashes) + " crashes)";
  } else if (startsWith(text, "unreachable")) {
    s.kind = WorkerStateKind::Unreachable;
    s.since = health_since;
    s.cause = text + " since " + seconds(health_since);
  } else if (w.restarted_at >= 0 && now - w.restarted_at < options_.window) {
    s.kind = WorkerStateKind::Restarted;
    s.since = w.restarted_at;
    s.cause = "crashed " + seconds(w.crashed_at) + ", restarted " + seconds(w.restarted_at);
  } else if (startsWith(text, "degraded")) {
    s.kind = WorkerStateKind::Degraded;
    s.since = health_since;
    s.cause = text + " since " + seconds(health_since);
  } else if (load_cold || (win.judge_load && still_low)) {
    s.kind = WorkerStateKind::Cold;
    s.since = win.start;
    std::snprintf(buf, sizeof buf, "cold: runs %.1f%% of the requests in %.0f s (fair %.0f%%)",
                  100 * win.load[k] / win.load_total, win.seconds, 100 * fair);
    s.cause = buf;
  } else if (win.bindings_known && eligible > 1 && (judged_zero || judged_low || starved || still_low)) {
    s.kind = WorkerStateKind::Cold;
    s.since = std::max<SimTime>(0, w.last_admitted);
    if (s.recent_bindings == 0) {
      s.cause =
          "cold: 0 bindings since " + (w.last_admitted >= 0 ? seconds(w.last_admitted) : std::string("the start"));
      if (starved && !judged_zero)
        s.cause += ", idle while " + std::to_string(win.running_elsewhere) + " run elsewhere";
    } else {
      std::snprintf(buf, sizeof buf, "cold: %ld of %ld bindings in %.0f s (fair %.0f%%)", s.recent_bindings, total,
                    win.seconds, 100 * fair);
      s.cause = buf;
    }
  } else if (w.last_eviction >= 0 && now - w.last_eviction <= options_.eviction_window) {
    s.kind = WorkerStateKind::Evicting;
    s.since = w.last_eviction;
    const auto n = evictions_.per_worker.find(static_cast<WorkerId>(s.store_index));
    std::snprintf(buf, sizeof buf, "evicting: %ld in %.0f s", n == evictions_.per_worker.end() ? 0L : n->second,
                  timeToSeconds(options_.eviction_window));
    s.cause = buf;
  } else if (win.bindings_known && s.recent_bindings == 0 && total == 0) {
    s.kind = WorkerStateKind::Idle;
    s.since = std::max<SimTime>(0, w.last_admitted);
    std::snprintf(buf, sizeof buf, "idle: no bindings in %.0f s", win.seconds);
    s.cause = buf;
  } else if (win.bindings_known && s.recent_bindings == 0) {
    s.kind = WorkerStateKind::Quiet;
    s.since = std::max<SimTime>(0, w.last_admitted);
    std::snprintf(buf, sizeof buf, "quiet: 0 of %ld bindings in %.0f s", total, win.seconds);
    s.cause = buf;
  } else {
    s.kind = WorkerStateKind::Ok;
    s.cause = "ok";
  }
  if (s.kind == WorkerStateKind::Cold)
    cold_.insert(s.worker);
  else
    cold_.erase(s.worker);
}

}  // namespace kvscope
