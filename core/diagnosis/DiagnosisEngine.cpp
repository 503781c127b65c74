#include "core/diagnosis/DiagnosisEngine.h"
#include "core/model/Overloaded.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "core/model/NumberText.h"
#include "core/stats/Percentiles.h"

namespace kvscope {

namespace {
std::string pct(double v) { return formatNumber("%.1f%%", v * 100); }

// The cheat sheet's thresholds, made numeric.
constexpr double kCascadeFailureRate = 0.30;  // "healthy to 80% failure within minutes"
// "one D has 0 bindings" (allowing a stray spill): under 6% of a fair share, i.e. 2% of the
// bindings on the lab's 3 D, 0.1% on 64 D (a fixed 2% would call every D of a 64-D cluster cold).
constexpr double kColdFairShare = 0.06;
constexpr long kColdMinBindings = 100;
constexpr long kColdMinBusySnapshots = 30;  // load shares from gauges: half a minute of 1-s snapshots
constexpr double kStormMeanTokens = 20000;  // "30-90K-token releases"
constexpr double kEarlyWindowS = 60;        // "the first 30-60 s"
constexpr double kEarlyFailureRate = 0.20;

bool coldShare(double share, std::size_t workers) { return share * static_cast<double>(workers) < kColdFairShare; }

// Evidence stays one readable line on a large cluster: up to kFullTable workers are listed in
// order; more are summarised as the lowest few, the median and the highest.
constexpr std::size_t kFullTable = 12;
constexpr std::size_t kListed = 6;
struct WorkerValue {
  std::string name;
  double value = 0;
  std::string text;  // the value as the evidence prints it
};
std::string workerTable(std::vector<WorkerValue> rows) {
  std::string out;
  if (rows.size() <= kFullTable) {
    for (const auto& r : rows) out += (out.empty() ? "" : " / ") + r.name + " " + r.text;
    return out;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  out = "lowest ";
  for (std::size_t i = 0; i < kListed / 2; ++i) out += (i ? ", " : "") + rows[i].name + " " + rows[i].text;
  const auto& median = rows[rows.size() / 2];
  const auto& top = rows.back();
  return out + "; median " + median.text + "; highest " + top.name + " " + top.text + " (" +
         std::to_string(rows.size()) + " workers)";
}
// The coldest first, at most kListed named.
std::string coldList(std::vector<WorkerValue> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  std::string out;
  for (std::size_t i = 0; i < rows.size() && i < kListed; ++i)
    out += (i ? ", " : "") + rows[i].name + " " + rows[i].text;
  if (rows.size() > kListed) out += " and " + std::to_string(rows.size() - kListed) + " more";
  return out;
}
}  // namespace

std::string DiagnosisEngine::name(WorkerId w) const {
  return w >= 0 && w < static_cast<WorkerId>(names_.size()) ? names_[static_cast<std::size_t>(w)]
                                                            : "D" + std::to_string(w);
}

void DiagnosisEngine::onRunStarted(const RunStarted& r) {
  names_.clear();
  for (const auto& w : r.workers) names_.push_back(w.name);
  bindings_.assign(r.workers.size(), 0);
  decode_.clear();
  for (const auto& w : r.workers) decode_.push_back(w.role == WorkerRole::Decode);
  running_sum_.assign(r.workers.size(), 0);
  cluster_running_sum_.assign(r.workers.size(), 0);
  busy_snapshots_.assign(r.workers.size(), 0);
  health_.clear();
  alive_.assign(r.workers.size(), true);
}

void DiagnosisEngine::onEviction(double t, const Eviction& ev) {
  ++evictions_;
  if (ev.granularity == EvictionGranularity::Session) {
    ++session_evictions_;
    ++session_evictions_per_worker_[ev.worker];
  }
  eviction_tokens_ += ev.tokens_freed;
  if (first_eviction_ < 0) first_eviction_ = t;
  last_eviction_ = t;
  if (ev.session) evicted_sessions_.add(ev.session);
}

void DiagnosisEngine::onRequestDone(double t, const RequestDone& d) {
  auto bucket = [](std::vector<Bucket>& v, double at) -> Bucket& {
    const auto i = static_cast<std::size_t>(std::max(0.0, at) / kBucketS);
    if (i >= v.size()) v.resize(i + 1);
    return v[i];
  };
  const double arrival = t - timeToSeconds(d.e2e);
  const bool failed = d.status != RequestStatus::Ok;
  const bool transfer = failed && (d.error.find("could be dead") != std::string::npos ||
                                   d.error.find("KVTransferError") != std::string::npos);
  for (Bucket* b : {&bucket(by_arrival_, arrival), &bucket(by_end_, t)}) {
    ++b->done;
    b->failed += failed;
    b->transfer_errors += transfer;
  }
  if (!failed) ++ok_requests_;
  if (!failed && d.ttft >= 0) ttft_.add(timeToSeconds(d.ttft));
}

void DiagnosisEngine::onSnapshot(double t, const Snapshot& s) {
  for (const auto& g : s.workers) {
    const auto w = static_cast<std::size_t>(g.worker);
    if (g.worker < 0 || w >= alive_.size() || alive_[w] == g.alive) continue;
    alive_[w] = g.alive;
    setHealth(t, name(g.worker), std::nullopt, !g.alive, g.alive ? "" : "its gauges say it is not alive");
  }
  addLoad(t, s);
  if (first_arrival_ < 0 || t - first_arrival_ > kEarlyWindowS / 2) return;
  int seeds = 0;
  for (const auto& g : s.workers) seeds += g.pending_seeds;
  peak_pending_seeds_early_ = std::max(peak_pending_seeds_early_, seeds);
  for (const auto& l : s.links) peak_link_queue_early_ = std::max(peak_link_queue_early_, l.queue_depth);
}

void DiagnosisEngine::onEvent(const Event& e) {
  const double t = timeToSeconds(e.time);
  if (t >= next_check_) {
    check();  // on what the stream said before this event
    next_check_ = (std::floor(t / kBucketS) + 1) * kBucketS;
  }
  end_ = std::max(end_, t);
  std::visit(Overloaded{
                 [&](const RunStarted& r) { onRunStarted(r); },
                 [&](const RouteDecision&) {
                   if (first_arrival_ < 0) first_arrival_ = t;
                 },
                 [&](const Admission& a) {
                   if (a.result != AdmissionResult::Admitted || a.worker < 0) return;
                   if (a.worker >= static_cast<WorkerId>(bindings_.size()))
                     bindings_.resize(static_cast<std::size_t>(a.worker) + 1);
                   ++bindings_[static_cast<std::size_t>(a.worker)];
                 },
                 [&](const SeedStarted& s) {
                   if (s.reseed) ++reseeds_;
                   if (first_arrival_ >= 0 && t - first_arrival_ <= kEarlyWindowS) ++seeds_early_;
                 },
                 [&](const Eviction& ev) { onEviction(t, ev); },
                 [&](const LinkHealth& l) {
                   if (l.state != LinkState::Dead) return;
                   if (dead_++ == 0) first_dead_ = t;
                   last_dead_ = t;
                   dead_aborted_ += l.aborted_requests;
                   ++dead_per_worker_[l.worker];
                   ++dead_per_link_[{l.prefill, l.worker}];
                 },
                 [&](const WorkerCrashed& c) {
                   setHealth(t, name(c.worker), std::nullopt, true, c.reason);
                   onCrash(t, c);
                 },
                 [&](const WorkerRestarted& r) { setHealth(t, name(r.worker), std::nullopt, false, ""); },
                 [&](const WorkerHealthChanged& h) { setHealth(t, h.worker, h.health, std::nullopt, h.reason); },
                 [&](const Correction& c) {
                   while (!recent_corrections_.empty() && recent_corrections_.front().t < t - kFixBeforeCrashS)
                     recent_corrections_.pop_front();
                   recent_corrections_.push_back({t, c.worker, c.fill_len, c.prefix_len});
                 },
                 [&](const RequestDone& d) { onRequestDone(t, d); },
                 [&](const Snapshot& s) { onSnapshot(t, s); },
                 [](const auto&) {},
             },
             e.payload);
}

void DiagnosisEngine::setHealth(double t, const std::string& worker, std::optional<WorkerHealth> health,
                                std::optional<bool> down, const std::string& reason) {
  Health& h = health_[worker];
  const bool was = h.since >= 0;
  if (health) h.health = *health;
  if (down) h.down = *down;
  const bool is = h.down || h.health == WorkerHealth::Degraded || h.health == WorkerHealth::Unreachable;
  if (is && !reason.empty()) h.reason = reason;
  if (is && !was) h.since = t;
  if (!is && was) {
    h.unhealthy_s += t - h.since;
    h.since = -1;
    h.reason.clear();
  }
}

bool DiagnosisEngine::unhealthySince(WorkerId w, double from) const {
  auto it = health_.find(name(w));
  if (it == health_.end()) return false;
  return it->second.since >= 0 || it->second.unhealthy_s > kUnhealthyShare * std::max(0.0, end_ - from);
}

std::optional<Finding> DiagnosisEngine::workerHealth() const {
  std::vector<std::pair<double, std::string>> down;  // (since, worker)
  for (const auto& [worker, h] : health_)
    if (h.since >= 0) down.emplace_back(h.since, worker);
  if (down.empty()) return std::nullopt;
  std::stable_sort(down.begin(), down.end());
  Finding f;
  f.mode = "H";
  f.name = "Worker down or degraded";
  f.window_start_s = down.front().first;
  f.window_end_s = end_;
  for (const auto& [since, worker] : down) {
    const Health& h = health_.at(worker);
    const char* state = h.down ? "down" : h.health == WorkerHealth::Unreachable ? "unreachable" : "degraded";
    f.subjects.push_back(worker);
    if (f.subjects.size() > kListed) continue;
    f.evidence += (f.evidence.empty() ? "" : "; ") + worker + " " + state + " since " + formatNumber("%.1f s", since) +
                  (h.reason.empty() ? "" : " (" + h.reason + ")");
  }
  if (down.size() > kListed) f.evidence += "; and " + std::to_string(down.size() - kListed) + " more";
  f.suggestion =
      "check the worker itself (its process, /metrics and log): the load findings (B) leave it out "
      "while it is unhealthy, and the router may still send it work";
  return f;
}

void DiagnosisEngine::onCrash(double t, const WorkerCrashed& c) {
  // Only the streaming-session invariant (an AssertionError) is a diagnosed mode.
  if (c.reason.find("AssertionError") == std::string::npos) return;
  if (crashes_.size() >= kMaxCrashFindings) {
    ++crashes_not_listed_;
    return;
  }
  Crash crash{t, c.worker, c.reason, std::nullopt};
  for (const Fix& k : recent_corrections_)
    if (k.worker == c.worker && k.t <= t && t - k.t <= kFixBeforeCrashS) crash.fix = k;
  crashes_.push_back(std::move(crash));
}

std::optional<Finding> DiagnosisEngine::cascade() const {
  const long aborted = dead_aborted_;
  long transfer_errors = 0;
  for (const auto& b : by_end_) transfer_errors += b.transfer_errors;
  if (dead_ == 0 || (aborted + transfer_errors) < 5) return std::nullopt;
  // The worst minute of failures (by end time), six 10-s buckets wide.
  double worst = 0;
  std::size_t worst_at = 0;
  long worst_failed = 0, worst_done = 0;
  for (std::size_t i = 0; i < by_end_.size(); ++i) {
    long done = 0, failed = 0;
    for (std::size_t k = i; k < std::min(by_end_.size(), i + 6); ++k) {
      done += by_end_[k].done;
      failed += by_end_[k].failed;
    }
    const double rate = done >= 10 ? static_cast<double>(failed) / static_cast<double>(done) : 0;
    if (rate > worst) worst = rate, worst_at = i, worst_failed = failed, worst_done = done;
  }
  if (worst < kCascadeFailureRate) return std::nullopt;
  std::map<std::string, int> per_worker;
  for (const auto& [w, n] : dead_per_worker_) per_worker[name(w)] += n;
  std::string where;
  for (const auto& [w, n] : per_worker) where += (where.empty() ? "" : ", ") + w + " x" + std::to_string(n);
  Finding f;
  f.mode = "A";
  f.name = "Mooncake \"instance not alive\" cascade";
  for (const auto& [link, n] : dead_per_link_)
    f.subjects.push_back("P" + std::to_string(link.first) + "->" + name(link.second));
  f.window_start_s = first_dead_;
  f.window_end_s = std::max(last_dead_, static_cast<double>(worst_at + 6) * kBucketS);
  f.evidence =
      std::to_string(dead_) + " link-dead events (" + where + "), " + std::to_string(aborted) +
      " in-flight requests aborted, " + std::to_string(transfer_errors) +
      " 'Decode instance could be dead' errors; failure rate peaked at " + pct(worst) + " (" +
      std::to_string(worst_failed) + "/" + std::to_string(worst_done) + ") in " +
      formatNumber("%.0f", static_cast<double>(worst_at) * kBucketS) + "-" +
      formatNumber("%.0f s", static_cast<double>(worst_at + 6) * kBucketS) +
      (ok_requests_ == 0
           ? " (no successful request is on record, e.g. logs name only failures: the rate counts failures alone)"
           : "");
  f.fix_knobs = {{"admission_backoff_ms", 2000}, {"admission_jitter_ms", 2000}, {"pending_seed_budget", 1}};
  f.suggestion =
      "set admission_backoff_ms + admission_jitter_ms and a pending_seed_budget (the real fix: backoff + "
      "per-D seed budget, decouple heartbeat from admission); softened by seed_min_turn_id=2, "
      "mc_transfer_timeout_s, request_timeout_s";
  return f;
}

void DiagnosisEngine::addLoad(double t, const Snapshot& s) {
  // A snapshot is busy when the decode workers that are up run at least one request each on
  // average: then a balanced router would have given every one of them some.
  double total = 0;
  std::size_t up = 0;
  for (const auto& g : s.workers) {
    const auto w = static_cast<std::size_t>(g.worker);
    if (g.worker < 0 || w >= decode_.size() || !decode_[w] || !g.alive) continue;
    total += g.running;
    ++up;
  }
  if (up < 2 || total < static_cast<double>(up)) return;
  if (first_busy_ < 0) first_busy_ = t;
  for (const auto& g : s.workers) {
    const auto w = static_cast<std::size_t>(g.worker);
    if (g.worker < 0 || w >= decode_.size() || !decode_[w] || !g.alive) continue;
    running_sum_[w] += g.running;
    cluster_running_sum_[w] += total;
    ++busy_snapshots_[w];
  }
}

std::optional<Finding> DiagnosisEngine::coldDecodeByLoad() const {
  std::vector<WorkerValue> table, cold;
  std::vector<std::string> cold_workers;
  long snapshots = 0;
  std::size_t counted = 0;
  for (std::size_t w = 0; w < running_sum_.size(); ++w) counted += busy_snapshots_[w] >= kColdMinBusySnapshots;
  for (std::size_t w = 0; w < running_sum_.size(); ++w) {
    if (busy_snapshots_[w] < kColdMinBusySnapshots) continue;  // down most of the run, or never busy
    snapshots = std::max(snapshots, busy_snapshots_[w]);
    const double share = running_sum_[w] / cluster_running_sum_[w];
    table.push_back({name(static_cast<WorkerId>(w)), share, pct(share)});
    if (coldShare(share, counted) && !unhealthySince(static_cast<WorkerId>(w), first_busy_)) {
      cold.push_back(table.back());
      cold_workers.push_back(name(static_cast<WorkerId>(w)));
    }
  }
  if (cold.empty()) return std::nullopt;
  return coldFinding(std::move(cold_workers), first_busy_,
                     "no routing decisions recorded; share of running requests (the workers' own gauges) over " +
                         std::to_string(snapshots) + " busy snapshots: " + workerTable(table) + "; starving: " +
                         coldList(cold) + " (a D that gets no new sessions while the others run full)");
}

Finding DiagnosisEngine::coldFinding(std::vector<std::string> subjects, double start_s, std::string evidence) const {
  Finding f;
  f.mode = "B";
  f.name = "Cold-D / overlap pinning";
  f.subjects = std::move(subjects);
  f.window_start_s = std::max(0.0, start_s);
  f.window_end_s = end_;
  f.evidence = std::move(evidence);
  f.fix_knobs = {{"K", 200}};  // E3's value
  f.fix_needs_new_sessions = true;
  f.fix_policy = "exclusive-overlap";
  f.suggestion =
      "raise the load-floor bonus K (E3 used K=200) as the mitigation; the real fix is the "
      "exclusive-overlap policy (count only session-owned blocks)";
  return f;
}

std::optional<Finding> DiagnosisEngine::coldDecode() const {
  long total = 0;
  for (long b : bindings_) total += b;
  if (total == 0) return coldDecodeByLoad();
  if (total < kColdMinBindings || bindings_.size() < 2) return std::nullopt;
  std::vector<WorkerValue> table, cold;
  std::vector<std::string> cold_workers;
  for (std::size_t w = 0; w < bindings_.size(); ++w) {
    const double share = static_cast<double>(bindings_[w]) / static_cast<double>(total);
    table.push_back({name(static_cast<WorkerId>(w)), share, std::to_string(bindings_[w])});
    // A D that was down or degraded could not take the sessions: that is its own finding (H).
    if (coldShare(share, bindings_.size()) && !unhealthySince(static_cast<WorkerId>(w), first_arrival_)) {
      cold.push_back({name(static_cast<WorkerId>(w)), share, pct(share)});
      cold_workers.push_back(name(static_cast<WorkerId>(w)));
    }
  }
  if (cold.empty()) return std::nullopt;
  return coldFinding(std::move(cold_workers), first_arrival_,
                     "bindings " + workerTable(table) + " of " + std::to_string(total) +
                         "; starving: " + coldList(cold) +
                         " (shared boilerplate counts as overlap, so new sessions follow the first warm D)");
}

std::optional<Finding> DiagnosisEngine::evictStorm() const {
  if (session_evictions_ < 5 || reseeds_ < 5) return std::nullopt;
  const double mean = static_cast<double>(eviction_tokens_) / static_cast<double>(evictions_);
  if (mean < kStormMeanTokens) return std::nullopt;
  const auto d = ttft_.summary();
  Finding f;
  f.mode = "C";
  f.name = "Evict storm (session-level eviction)";
  for (const auto& [w, n] : session_evictions_per_worker_) f.subjects.push_back(name(w));
  f.window_start_s = first_eviction_;
  f.window_end_s = last_eviction_;
  const double minutes = std::max(1.0, (last_eviction_ - first_eviction_) / 60);
  f.evidence = std::to_string(session_evictions_) + " session-level evictions (" +
               formatNumber("%.1f", session_evictions_ / minutes) + "/min), mean " + formatNumber("%.0f", mean) +
               " tokens freed each, " + std::to_string(evicted_sessions_.count()) + " sessions hit; " +
               std::to_string(reseeds_) + " reseeds; TTFT p99 " + formatNumber("%.2f s", d.p99);
  f.suggestion =
      "switch to block-level eviction (eviction: block) - the real fix; mitigations: session_soft_cap, "
      "direct_max_uncached_tokens";
  return f;
}

std::optional<Finding> DiagnosisEngine::reseedStorm() const {
  if (first_arrival_ < 0) return std::nullopt;
  const std::size_t first = static_cast<std::size_t>(first_arrival_ / kBucketS);
  const std::size_t last_early = static_cast<std::size_t>((first_arrival_ + kEarlyWindowS) / kBucketS);
  long early_done = 0, early_failed = 0, late_done = 0, late_failed = 0;
  for (std::size_t i = first; i < by_arrival_.size(); ++i) {
    (i < last_early ? early_done : late_done) += by_arrival_[i].done;
    (i < last_early ? early_failed : late_failed) += by_arrival_[i].failed;
  }
  if (early_done < 10) return std::nullopt;
  const double early = static_cast<double>(early_failed) / static_cast<double>(early_done);
  const double late = late_done > 0 ? static_cast<double>(late_failed) / static_cast<double>(late_done) : 0;
  if (early < kEarlyFailureRate || late > early / 2) return std::nullopt;
  Finding f;
  f.mode = "C'";
  f.name = "Reseed storm (turn-1 seeds all at once)";
  f.window_start_s = first_arrival_;
  f.window_end_s = first_arrival_ + kEarlyWindowS;
  f.evidence = "requests arriving in the first " + formatNumber("%.0f s", kEarlyWindowS) + " failed at " + pct(early) +
               " (" + std::to_string(early_failed) + "/" + std::to_string(early_done) + "), later ones at " +
               pct(late) + "; " + std::to_string(seeds_early_) + " seeds started in that window, peak " +
               std::to_string(peak_pending_seeds_early_) + " concurrent seeds and transfer queue depth " +
               std::to_string(peak_link_queue_early_) + " in the first 30 s";
  f.fix_knobs = {{"pending_seed_budget", 1}};
  f.suggestion = "set a per-D pending_seed_budget (the real fix); seed_min_turn_id=2 skips turn-1 seeds as a stopgap";
  return f;
}

std::vector<Finding> DiagnosisEngine::invariantCrash() const {
  std::vector<Finding> out;
  for (const auto& c : crashes_) {
    const std::optional<Fix>& fix = c.fix;
    Finding f;
    f.mode = "D";
    f.name = "Streaming-session invariant crash";
    f.subjects = {name(c.worker)};
    f.window_start_s = fix ? fix->t : c.t;
    f.window_end_s = c.t;
    f.evidence = name(c.worker) + " exited at " + formatNumber("%.1f s", c.t) + " with " + c.reason;
    if (fix)
      f.evidence += ", right after 'Correcting streaming-session extend_input_len from " + std::to_string(fix->fill) +
                    " to 0 (fill_len=" + std::to_string(fix->fill) + ", prefix_len=" + std::to_string(fix->prefix) +
                    ")'";
    f.suggestion =
        "hotfix: drop corrected requests before batching (correction_fault: drop); the real fix is "
        "block-level eviction, which removes the correction path";
    out.push_back(std::move(f));
  }
  if (crashes_not_listed_ > 0 && !out.empty())
    out.back().evidence += "; " + std::to_string(crashes_not_listed_) + " more invariant crashes after these";
  return out;
}

std::vector<Finding> DiagnosisEngine::current() const {
  std::vector<Finding> out;
  for (auto f : {workerHealth(), cascade(), coldDecode(), evictStorm(), reseedStorm()})
    if (f) out.push_back(*f);
  for (auto& f : invariantCrash()) out.push_back(std::move(f));
  for (Finding& f : out) {  // a window drawn from whole buckets may reach past the stream
    f.window_end_s = std::min(f.window_end_s, end_);
    f.window_start_s = std::min(f.window_start_s, f.window_end_s);
  }
  return out;
}

namespace {
// One failure mode is one finding, whatever its subjects and window do from check to check.
bool sameMode(const Finding& a, const Finding& b) { return a.mode == b.mode && a.name == b.name; }
const Finding* sameMode(const std::vector<Finding>& list, const Finding& f) {
  for (const Finding& g : list)
    if (sameMode(g, f)) return &g;
  return nullptr;
}
}  // namespace

void DiagnosisEngine::check() {
  const std::vector<Finding> now = current();
  for (Seen& s : seen_) {
    if (const Finding* f = sameMode(now, s.finding)) {
      s.finding = *f;
      s.resolved_at = -1;
    } else if (s.resolved_at < 0) {
      s.resolved_at = end_;
    }
  }
  for (const Finding& f : now)
    if (f.mode != "D" &&
        !std::any_of(seen_.begin(), seen_.end(), [&](const Seen& s) { return sameMode(f, s.finding); }))
      seen_.push_back({f, -1});
}

std::vector<Finding> DiagnosisEngine::findings() const {
  std::vector<Finding> out = current();
  std::vector<Finding> resolved;
  for (const Seen& s : seen_) {
    if (sameMode(out, s.finding)) continue;
    Finding f = s.finding;
    f.resolved = true;
    f.window_end_s = s.resolved_at >= 0 ? s.resolved_at : end_;  // held at the last check, gone since
    f.window_start_s = std::min(f.window_start_s, f.window_end_s);
    resolved.push_back(std::move(f));
  }
  out.insert(out.end(), std::make_move_iterator(resolved.begin()), std::make_move_iterator(resolved.end()));
  return out;
}

std::size_t DiagnosisEngine::memoryBytes() const {
  std::size_t n = sizeof(*this) + ttft_.memoryBytes() + evicted_sessions_.memoryBytes();
  n += (by_arrival_.capacity() + by_end_.capacity()) * sizeof(Bucket);
  n += crashes_.capacity() * sizeof(Crash) + recent_corrections_.size() * sizeof(Fix);
  n += health_.size() * (sizeof(Health) + 64) + alive_.capacity() / 8 + seen_.capacity() * sizeof(Seen);
  n += (dead_per_worker_.size() + dead_per_link_.size() + session_evictions_per_worker_.size()) * 48 +
       names_.size() * 32 + bindings_.capacity() * sizeof(long);
  return n;
}

}  // namespace kvscope
