#include "backend/metrics/RunMetrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "core/metrics/LabMetrics.h"
#include "core/model/Overloaded.h"
#include "core/model/Saturating.h"

namespace kvscope {

namespace {

// Label values may hold anything a scenario file allows; the format wants \, " and newline escaped.
std::string escapeLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void appendNumber(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
  out.append(buf, r.ptr);
}

void appendNumber(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void appendNumber(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// "# HELP" and "# TYPE" once per family, before its samples, as the format requires.
void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

template <class V>
void sample(std::string& out, std::string_view name, std::string_view labels, V value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out += ' ';
  appendNumber(out, value);
  out += '\n';
}

template <class V>
void counter(std::string& out, std::string_view name, std::string_view help, V value) {
  family(out, name, "counter", help);
  sample(out, name, {}, value);
}

// A family read from each worker's latest snapshot gauges (workers without one are left out).
template <class Workers, class ValueOf>
void snapshotFamily(std::string& out, std::string_view name, std::string_view type, std::string_view help,
                    const Workers& workers, const std::vector<std::string>& labels, ValueOf value_of) {
  family(out, name, type, help);
  for (std::size_t i = 0; i < workers.size(); ++i)
    if (workers[i].has_gauges) sample(out, name, labels[i], value_of(workers[i].gauges));
}

auto field(std::int64_t WorkerGauges::*f) {
  return [f](const WorkerGauges& g) { return g.*f; };
}

// A histogram family: cumulative buckets with their `le` bounds, then +Inf, _sum and _count.
template <class Histogram, class Bounds>
void histogram(std::string& out, std::string_view name, std::string_view help, const Histogram& h,
               const Bounds& bounds) {
  family(out, name, "histogram", help);
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    cumulative += h.buckets[i];
    std::string le = "le=\"";
    appendNumber(le, bounds[i]);
    sample(out, bucket, le + "\"", cumulative);
  }
  sample(out, bucket, "le=\"+Inf\"", h.count);
  sample(out, std::string(name) + "_sum", {}, h.sum);
  sample(out, std::string(name) + "_count", {}, h.count);
}

}  // namespace

template <std::size_t N>
void RunMetrics::Histogram<N>::observe(double seconds, const std::array<double, N>& bounds) {
  // `le` is inclusive: a value equal to a bound belongs to that bucket.
  const auto it = std::lower_bound(bounds.begin(), bounds.end(), seconds);
  ++buckets[static_cast<std::size_t>(it - bounds.begin())];
  ++count;
  sum += seconds;
}

RunMetrics::Worker& RunMetrics::worker(WorkerId w) {
  auto& workers = state_.workers;
  while (static_cast<WorkerId>(workers.size()) <= w) {
    // Only a stream from outside the simulator (a live cluster) could name a worker RunStarted did
    // not list; it still gets its own series rather than being dropped.
    Worker unknown;
    unknown.name = "W" + std::to_string(workers.size());
    unknown.role = "unknown";
    workers.push_back(std::move(unknown));
  }
  return workers[static_cast<std::size_t>(w)];
}

void RunMetrics::startRun(const RunStarted& r, SimTime time) {
  // A new run starts from zero: Prometheus reads the drop as a counter reset.
  State& s = state_;
  s = State{};
  s.has_run = true;
  s.time = time;
  s.scenario = escapeLabel(r.scenario);
  s.policy = escapeLabel(r.policy);
  s.seed = std::to_string(r.seed);
  s.profile = escapeLabel(r.profile);
  for (const auto& w : r.workers) {
    Worker& x = s.workers.emplace_back();
    x.name = escapeLabel(w.name);
    x.role = toString(w.role);
  }
  for (const auto& p : r.prefill) s.prefill_names.push_back(escapeLabel(p.name));
  s.offered = r.offered_requests;
  s.trace_window_s = r.trace_window_s;
}

void RunMetrics::countRequest(const RequestDone& d) {
  State& s = state_;
  ++s.requests;
  s.slip.observe(timeToSeconds(std::max<SimTime>(0, d.dispatch_slip)), kSlipBuckets);
  if (d.status != RequestStatus::Ok) {
    ++s.failures;
    return;
  }
  s.e2e.observe(timeToSeconds(d.e2e), kE2eBuckets);
  if (d.ttft >= 0) s.ttft.observe(timeToSeconds(d.ttft), kTtftBuckets);
  // As LabMetricsCollector.
  if (d.output_tokens > 1 && d.ttft >= 0)
    s.tpot.observe(timeToSeconds(d.e2e - d.ttft) / static_cast<double>(d.output_tokens - 1), kTpotBuckets);
  const std::int64_t input = std::max<std::int64_t>(0, d.input_tokens);
  const bool known = d.cached_tokens >= 0;
  const std::int64_t cached = std::min(d.cached_tokens, input);
  if (known) {
    addClamped(s.ceiling_intra, std::clamp<std::int64_t>(d.ceiling_intra_tokens, 0, input));
    addClamped(s.ceiling_any, std::clamp<std::int64_t>(d.ceiling_any_tokens, 0, input));
    const std::string_view c = LabMetrics::classOf(input, cached);
    ++s.classes[c == "WARM" ? 0 : c == "MEDIUM" ? 1 : 2];
  }
  if (d.worker >= 0) {
    Worker& w = worker(d.worker);
    addClamped(w.prompt_tokens, d.input_tokens);
    addClamped(w.generation_tokens, d.output_tokens);
    if (known) {
      addClamped(w.cache_queries, input);
      addClamped(w.cache_hits, cached);
    }
  }
}

void RunMetrics::onEvent(const Event& e) {
  // As SummaryCollector: steering the playback changes nothing the run did (nor its time).
  if (std::holds_alternative<RunControlChanged>(e.payload)) return;
  std::lock_guard lock(mutex_);
  State& s = state_;
  s.time = std::max(s.time, e.time);
  std::visit(Overloaded{
                 [&](const RunStarted& r) { startRun(r, e.time); },
                 // The same rules as SummaryCollector, so the two agree at the end of a run.
                 [&](const Admission& a) {
                   if (a.result != AdmissionResult::Admitted || a.worker < 0) return;
                   ++worker(a.worker).bindings;
                   if (a.path == RoutePath::Direct) ++s.direct;
                 },
                 [&](const SeedStarted& seed) { ++(seed.reseed ? s.reseeds : s.seeds); },
                 [&](const Eviction& ev) {
                   ++s.evictions;
                   addClamped(s.evicted_tokens, ev.tokens_freed);
                 },
                 [&](const LinkHealth& l) {
                   if (l.state != LinkState::Dead) return;
                   ++s.link_dead;
                   addClamped(s.aborted, l.aborted_requests);
                 },
                 [&](const WorkerCrashed& c) {
                   ++s.crashes;
                   addClamped(s.aborted, c.aborted_requests);
                 },
                 [&](const WorkerRestarted&) { ++s.restarts; },
                 [&](const Correction&) { ++s.corrections; },
                 [&](const Retraction& r) {
                   ++s.retractions;
                   if (r.worker < 0) return;
                   Worker& w = worker(r.worker);
                   addClamped(w.retracted, r.requests.size());
                   w.last_retracted = r.requests.size();
                 },
                 [&](const RequestDone& d) { countRequest(d); },
                 [&](const PolicyChanged& p) { s.policy = escapeLabel(p.new_policy); },
                 [&](const Snapshot& snap) {
                   for (const auto& g : snap.workers) {
                     if (g.worker < 0) continue;
                     Worker& w = worker(g.worker);
                     w.gauges = g;
                     w.has_gauges = true;
                   }
                   s.links = snap.links;  // reuses the vector's storage: no allocation after the first
                 },
                 [&](const RunFinished&) { s.finished = true; },
                 [](const auto&) {},
             },
             e.payload);
}

std::string RunMetrics::render() const {
  State s;
  {
    std::lock_guard lock(mutex_);
    s = state_;
  }
  std::string out;
  out.reserve(8192 + s.workers.size() * 2048 + s.links.size() * 512);
  renderRun(out, s);
  std::vector<std::string> labels;
  labels.reserve(s.workers.size());
  for (const auto& w : s.workers) labels.push_back("worker=\"" + w.name + "\",role=\"" + w.role + "\"");
  renderWorkerGauges(out, s, labels);
  renderWorkerCounters(out, s, labels);
  renderRunCounters(out, s);
  renderLabCounters(out, s);
  renderHistograms(out, s);
  renderLinkGauges(out, s);
  return out;
}

// Run-wide state.
void RunMetrics::renderRun(std::string& out, const State& s) {
  family(out, "kvscope_run_info", "gauge", "The run being served (always 1; its metadata are the labels).");
  if (s.has_run)
    sample(out, "kvscope_run_info",
           "scenario=\"" + s.scenario + "\",policy=\"" + s.policy + "\",seed=\"" + s.seed + "\",profile=\"" +
               s.profile + "\"",
           std::uint64_t{1});
  family(out, "kvscope_sim_time_seconds", "gauge", "Simulated (or replayed) time of the newest event.");
  sample(out, "kvscope_sim_time_seconds", {}, timeToSeconds(s.time));
  family(out, "kvscope_run_finished", "gauge", "1 once the run has ended (the values are then final).");
  sample(out, "kvscope_run_finished", {}, std::uint64_t{s.finished ? 1u : 0u});
}

// Per-worker gauges from the latest snapshot.
void RunMetrics::renderWorkerGauges(std::string& out, const State& s, const std::vector<std::string>& labels) {
  const auto gauge = [&](std::string_view name, std::string_view help, auto value_of) {
    snapshotFamily(out, name, "gauge", help, s.workers, labels, value_of);
  };
  gauge("kvscope_num_used_tokens", "KV cache tokens in use (as sglang:num_used_tokens).",
        [](const WorkerGauges& g) { return std::int64_t{g.kv_used}; });
  gauge("kvscope_kv_capacity_tokens", "KV cache capacity in tokens.",
        [](const WorkerGauges& g) { return std::int64_t{g.kv_capacity}; });
  gauge("kvscope_token_usage", "Fraction of the KV cache in use, 0..1 (as sglang:token_usage).",
        [](const WorkerGauges& g) {
          return g.kv_capacity > 0 ? static_cast<double>(g.kv_used) / static_cast<double>(g.kv_capacity) : 0.0;
        });
  gauge("kvscope_kv_evictable_tokens",
        "KV cache tokens held by the unlocked, evictable radix cache (as sglang:kv_evictable_tokens).",
        [](const WorkerGauges& g) { return std::int64_t{g.kv_evictable}; });
  gauge("kvscope_kv_peak_tokens", "Highest KV cache tokens in use since the previous snapshot (spikes survive).",
        [](const WorkerGauges& g) { return std::int64_t{g.kv_peak}; });
  gauge("kvscope_num_running_reqs", "Requests running (as sglang:num_running_reqs).",
        [](const WorkerGauges& g) { return std::int64_t{g.running}; });
  gauge("kvscope_num_queue_reqs", "Requests waiting: prefill queue, KV space, seed slots (as sglang:num_queue_reqs).",
        [](const WorkerGauges& g) { return std::int64_t{g.queued}; });
  gauge("kvscope_resident_sessions", "Sessions whose KV cache is resident on the worker.",
        [](const WorkerGauges& g) { return std::int64_t{g.resident_sessions}; });
  gauge("kvscope_bound_sessions", "Sessions the router has bound to the worker.",
        [](const WorkerGauges& g) { return std::int64_t{g.bindings}; });
  gauge("kvscope_pending_seeds", "Seeds and reseeds in flight to the worker.",
        [](const WorkerGauges& g) { return std::int64_t{g.pending_seeds}; });
  gauge("kvscope_worker_up", "1 while the worker is alive, 0 after a crash until its restart.",
        [](const WorkerGauges& g) { return std::int64_t{g.alive ? 1 : 0}; });

  family(out, "kvscope_num_retracted_reqs", "gauge",
         "Requests the latest decode retraction took out of the batch (as sglang:num_retracted_reqs).");
  for (std::size_t i = 0; i < s.workers.size(); ++i)
    sample(out, "kvscope_num_retracted_reqs", labels[i], s.workers[i].last_retracted);
}

// Per-worker counters (and the live router's and engines' per-worker numbers among them).
void RunMetrics::renderWorkerCounters(std::string& out, const State& s, const std::vector<std::string>& labels) {
  const auto perWorker = [&](std::string_view name, std::string_view help, auto value_of) {
    family(out, name, "counter", help);
    for (std::size_t i = 0; i < s.workers.size(); ++i) sample(out, name, labels[i], value_of(s.workers[i]));
  };
  const auto fromSnapshot = [&](std::string_view name, std::string_view type, std::string_view help, auto value_of) {
    snapshotFamily(out, name, type, help, s.workers, labels, value_of);
  };
  perWorker("kvscope_bindings_total", "Admitted requests bound to the worker (the summary's bindings).",
            [](const Worker& w) { return w.bindings; });
  perWorker("kvscope_num_retracted_requests_total",
            "Requests retracted from the decode batch when KV ran out (as sglang:num_retracted_requests_total).",
            [](const Worker& w) { return w.retracted; });
  perWorker("kvscope_prompt_tokens_total", "Input tokens of the requests the worker completed.",
            [](const Worker& w) { return w.prompt_tokens; });
  perWorker("kvscope_generation_tokens_total", "Output tokens of the requests the worker completed.",
            [](const Worker& w) { return w.generation_tokens; });
  fromSnapshot("kvscope_expired_unreported_total", "counter",
               "Requests routed to the worker and forgotten with no report (the live router's unreported_expiry_s or a "
               "max_tracked_* cap): a client that crashed or never reports.",
               field(&WorkerGauges::expired_unreported));
  fromSnapshot("kvscope_awaiting_report", "gauge",
               "Requests the live router routed to the worker that still wait for their report (load until it comes).",
               field(&WorkerGauges::awaiting_report));
  fromSnapshot("kvscope_kv_event_blocks", "gauge",
               "Blocks the worker's engine holds in its KV cache, from its KV events (vLLM/SGLang --kv-events-config).",
               field(&WorkerGauges::kv_event_blocks));
  const auto engineCounter = [&](std::string_view name, std::string_view help, std::int64_t WorkerGauges::*f) {
    fromSnapshot(name, "counter", help, field(f));
  };
  engineCounter(
      "kvscope_kv_event_stored_blocks_total",
      "Live: GPU-tier blocks the worker's engine stored, from its KV events (rate() is the cache's fill rate).",
      &WorkerGauges::kv_event_stored);
  engineCounter("kvscope_kv_event_removed_blocks_total",
                "Live: GPU-tier blocks the worker's engine removed (evictions, clears), from its KV events.",
                &WorkerGauges::kv_event_removed);
  engineCounter("kvscope_engine_prefix_queried_tokens_total",
                "Live: prompt tokens the worker's engine looked up in its prefix cache since KVScope watched "
                "(sglang:prompt_tokens_total, vllm:prefix_cache_queries).",
                &WorkerGauges::prefix_queried_tokens);
  engineCounter(
      "kvscope_engine_prefix_hit_tokens_total",
      "Live: of those, the tokens its prefix cache held (sglang:cached_tokens_total, vllm:prefix_cache_hits).",
      &WorkerGauges::prefix_hit_tokens);
  engineCounter("kvscope_engine_external_queried_tokens_total",
                "Live: prompt tokens the engine's KV connector looked up in other instances' caches "
                "(vllm:external_prefix_cache_queries).",
                &WorkerGauges::external_queried_tokens);
  engineCounter("kvscope_engine_external_hit_tokens_total",
                "Live: of those, the tokens the connector found (vllm:external_prefix_cache_hits).",
                &WorkerGauges::external_hit_tokens);
  perWorker("kvscope_prefix_cache_queries_total",
            "Prompt tokens of completed requests whose cache hit is known (as vllm:prefix_cache_queries); the lab's "
            "APC is hits / queries.",
            [](const Worker& w) { return w.cache_queries; });
  perWorker("kvscope_prefix_cache_hits_total",
            "Prompt tokens served from the worker's prefix cache (as vllm:prefix_cache_hits).",
            [](const Worker& w) { return w.cache_hits; });
}

// Run-wide counters.
void RunMetrics::renderRunCounters(std::string& out, const State& s) {
  counter(out, "kvscope_requests_total", "Requests finished, completed or failed.", s.requests);
  counter(out, "kvscope_request_failures_total", "Requests that failed.", s.failures);
  counter(out, "kvscope_evictions_total", "KV cache evictions (sessions or blocks freed to make room).", s.evictions);
  counter(out, "kvscope_evicted_tokens_total", "KV cache tokens freed by evictions.", s.evicted_tokens);
  counter(out, "kvscope_seeds_total", "Seeds dispatched (a session's KV prefilled on P and sent to D).", s.seeds);
  counter(out, "kvscope_reseeds_total", "Reseeds dispatched (a session's KV rebuilt after it was lost).", s.reseeds);
  counter(out, "kvscope_direct_appends_total", "Admitted requests that appended to KV already on the worker.",
          s.direct);
  counter(out, "kvscope_link_dead_total", "Times a prefill-to-decode link was marked dead.", s.link_dead);
  counter(out, "kvscope_aborted_requests_total", "Requests aborted by dead links and worker crashes.", s.aborted);
  counter(out, "kvscope_worker_crashes_total", "Worker crashes.", s.crashes);
  counter(out, "kvscope_worker_restarts_total", "Worker restarts after a crash.", s.restarts);
  counter(out, "kvscope_corrections_total", "Streaming-session extend_input_len corrections.", s.corrections);
  counter(out, "kvscope_retractions_total",
          "Decode out-of-memory events (\"Decode out of memory happened\"), each retracting requests.", s.retractions);
}

// The lab's: the unbounded cache's hits, the request classes, the workload's offer.
void RunMetrics::renderLabCounters(std::string& out, const State& s) {
  family(out, "kvscope_prefix_cache_ceiling_hits_total", "counter",
         "Prompt tokens an unbounded cache would have hit on the same requests (scope intra: earlier requests of the "
         "session; any: of any session): the APC ceilings are these over the queries.");
  sample(out, "kvscope_prefix_cache_ceiling_hits_total", "scope=\"intra\"", s.ceiling_intra);
  sample(out, "kvscope_prefix_cache_ceiling_hits_total", "scope=\"any\"", s.ceiling_any);
  family(out, "kvscope_requests_by_class_total", "counter",
         "Completed requests by the lab's class: HEAVY >= 20,000 uncached tokens; WARM more than half cached or under "
         "5,000 uncached; MEDIUM the rest.");
  for (std::size_t i = 0; i < s.classes.size(); ++i)
    sample(out, "kvscope_requests_by_class_total",
           std::string("class=\"") +
               (i == 0   ? "WARM"
                : i == 1 ? "MEDIUM"
                         : "HEAVY") +
               "\"",
           s.classes[i]);
  family(out, "kvscope_offered_requests", "gauge",
         "Requests the workload offers (the completion rate's denominator; 0 live).");
  sample(out, "kvscope_offered_requests", {}, s.offered);
  family(out, "kvscope_trace_window_seconds", "gauge",
         "Span of the workload's trace times (wall amplification divides by it).");
  sample(out, "kvscope_trace_window_seconds", {}, s.trace_window_s);
}

// Latency histograms of completed requests.
void RunMetrics::renderHistograms(std::string& out, const State& s) {
  histogram(out, "kvscope_time_to_first_token_seconds", "Time to first token of completed requests, in seconds.",
            s.ttft, kTtftBuckets);
  histogram(out, "kvscope_e2e_request_latency_seconds", "End-to-end latency of completed requests, in seconds.", s.e2e,
            kE2eBuckets);
  histogram(out, "kvscope_time_per_output_token_seconds",
            "(E2E - TTFT) / (output tokens - 1) of completed requests with more than one output token, in seconds.",
            s.tpot, kTpotBuckets);
  histogram(out, "kvscope_dispatch_slip_seconds",
            "Each request's fire time minus its trace time (early fires count as 0).", s.slip, kSlipBuckets);
}

// Per-link gauges (prefill -> decode Mooncake links) from the latest snapshot.
void RunMetrics::renderLinkGauges(std::string& out, const State& s) {
  const auto linkLabels = [&](const LinkGauges& l) {
    const auto p = static_cast<std::size_t>(l.prefill);
    const auto w = static_cast<std::size_t>(l.worker);
    return "prefill=\"" +
           (l.prefill >= 0 && p < s.prefill_names.size() ? s.prefill_names[p] : "P" + std::to_string(l.prefill)) +
           "\",worker=\"" +
           (l.worker >= 0 && w < s.workers.size() ? s.workers[w].name : "W" + std::to_string(l.worker)) + "\"";
  };
  std::vector<std::string> link_labels;
  link_labels.reserve(s.links.size());
  for (const auto& l : s.links) link_labels.push_back(linkLabels(l));
  const auto link = [&](std::string_view name, std::string_view help, auto value_of) {
    family(out, name, "gauge", help);
    for (std::size_t i = 0; i < s.links.size(); ++i) sample(out, name, link_labels[i], value_of(s.links[i]));
  };
  link("kvscope_link_queue_depth", "Transfers queued on the link.",
       [](const LinkGauges& l) { return std::int64_t{l.queue_depth}; });
  link("kvscope_link_bytes_in_flight", "Bytes being transferred on the link.",
       [](const LinkGauges& l) { return std::int64_t{l.bytes_in_flight}; });
  link("kvscope_link_state", "Link health: 0 alive, 1 suspect, 2 dead.",
       [](const LinkGauges& l) { return static_cast<std::int64_t>(l.state); });
}

}  // namespace kvscope
