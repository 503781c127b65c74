#include "core/live/WorkerMetricsTracker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/model/NumberText.h"

namespace kvscope {

namespace {

// Scraped numbers are untrusted: casting an out-of-range double to an integer is undefined.
std::int32_t clampCount(double v) { return std::isnan(v) ? 0 : static_cast<std::int32_t>(std::clamp(v, 0.0, 1e9)); }
std::int64_t clampTokens(double v) { return std::isnan(v) ? 0 : static_cast<std::int64_t>(std::clamp(v, 0.0, 1e15)); }

}  // namespace

std::optional<double> WorkerMetricsTracker::quantile(const std::vector<std::pair<double, double>>& buckets, double q) {
  if (buckets.empty() || !std::isinf(buckets.back().first)) return std::nullopt;
  const double total = buckets.back().second;
  if (!(total > 0)) return std::nullopt;
  const double rank = q * total;
  double lower = 0, below = 0;
  for (const auto& [bound, count] : buckets) {
    if (count >= rank) {
      // The +Inf bucket has no upper edge: report the highest finite bound, as Prometheus does.
      if (std::isinf(bound)) return lower;
      const double in_bucket = count - below;
      return in_bucket > 0 ? lower + (bound - lower) * (rank - below) / in_bucket : bound;
    }
    lower = bound;
    below = count;
  }
  return lower;
}

std::string MetricsUpdate::staleReason() const {
  if (!stale_for_s) return {};
  char buf[160];
  std::snprintf(
      buf, sizeof buf, "stale: gauges unchanged for %.0f s (%s; an idle worker keeps its last ones)", *stale_for_s,
      engine == EngineKind::Vllm ? "vLLM sets them when its engine steps" : "SGLang sets them when it logs a batch");
  return buf;
}

double WorkerMetricsTracker::increase(std::optional<double>& previous, std::optional<double> now, const char* name,
                                      std::vector<std::string>& notes) {
  if (!now) return 0;
  // A labelled series appears with its first increment: after the first scrape, absent was 0.
  if (!previous && seen_) previous = 0.0;
  double delta = 0;
  if (previous) {
    delta = *now - *previous;
    if (delta < 0) {
      notes.push_back(std::string(name) + " went down from " + formatNumber("%.0f", *previous) + " to " +
                      formatNumber("%.0f", *now) + ": the counter was reset (worker restarted?)");
      delta = *now;
    }
  }
  previous = now;
  return delta;
}

IntervalLatency WorkerMetricsTracker::interval(std::optional<LatencyHistogram>& previous,
                                               const std::optional<LatencyHistogram>& now) {
  IntervalLatency out;
  if (!now) return out;
  if (!previous && seen_) previous = LatencyHistogram{};  // first observed after we started watching
  if (previous && now->count >= previous->count) {
    std::map<double, double> before(previous->buckets.begin(), previous->buckets.end());
    std::vector<std::pair<double, double>> delta;
    for (const auto& [bound, count] : now->buckets) {
      const auto it = before.find(bound);
      delta.push_back({bound, std::max(0.0, count - (it == before.end() ? 0 : it->second))});
    }
    // Cumulative again: a bucket layout change must not make a count go down.
    for (std::size_t i = 1; i < delta.size(); ++i) delta[i].second = std::max(delta[i].second, delta[i - 1].second);
    out.requests = now->count - previous->count;
    if (out.requests > 0) {
      out.mean_s = (now->sum - previous->sum) / out.requests;
      out.p50_s = quantile(delta, 0.5);
      out.p99_s = quantile(delta, 0.99);
    }
  }
  previous = now;
  return out;
}

void WorkerMetricsTracker::markStale(MetricsUpdate& u, const EngineMetrics& m, SimTime now) {
  // The gauges the scheduler sets in log_stats (capacity is a constant and left out).
  std::vector<std::optional<double>> frozen{m.token_usage,
                                            m.num_used_tokens,
                                            m.kv_available_tokens,
                                            m.kv_evictable_tokens,
                                            m.num_running_reqs,
                                            m.num_queue_reqs,
                                            m.gen_throughput,
                                            m.cache_hit_rate,
                                            m.num_decode_prealloc_queue_reqs,
                                            m.num_decode_transfer_queue_reqs,
                                            m.num_prefill_bootstrap_queue_reqs,
                                            m.num_prefill_inflight_queue_reqs,
                                            m.pending_prealloc_token_usage};
  if (!seen_ || frozen != frozen_) changed_at_ = now;
  frozen_ = std::move(frozen);
  if (seen_ && now - changed_at_ >= kStaleAfter) u.stale_for_s = timeToSeconds(now - changed_at_);
}

namespace {

// A serving worker's gauges for the next Snapshot, from one scrape.
WorkerGauges gaugesOf(const LiveWorkerRef& ref, const EngineMetrics& m) {
  WorkerGauges g;
  g.worker = ref.worker;
  std::int64_t capacity = ref.kv_capacity;
  if (m.max_total_num_tokens && *m.max_total_num_tokens > 0)
    capacity = clampTokens(*m.max_total_num_tokens);
  else if (m.num_used_tokens && m.token_usage && *m.token_usage > 0)
    capacity = clampTokens(std::round(*m.num_used_tokens / *m.token_usage));
  g.kv_capacity = capacity;
  // Upstream's num_used_tokens (every version) excludes the evictable radix cache, as the twin's
  // kv_used does; kv_used_tokens (v0.5.11+) is the same count for the full-attention pool.
  if (m.num_used_tokens)
    g.kv_used = clampTokens(*m.num_used_tokens);
  else if (m.kv_used_tokens)
    g.kv_used = clampTokens(*m.kv_used_tokens);
  else if (m.token_usage && capacity > 0)
    g.kv_used = clampTokens(std::round(*m.token_usage * static_cast<double>(capacity)));
  if (m.kv_evictable_tokens) g.kv_evictable = clampTokens(*m.kv_evictable_tokens);
  g.kv_peak = g.kv_used;  // one sample per scrape: the peak between scrapes is not exported
  g.running = clampCount(m.num_running_reqs.value_or(0));
  g.queued = clampCount(m.num_queue_reqs.value_or(0));
  // Seeds waiting on this D: admitted to its prealloc queue or receiving KV (ARCHITECTURE.md D2, "pending seeds").
  g.pending_seeds =
      clampCount(m.num_decode_prealloc_queue_reqs.value_or(0) + m.num_decode_transfer_queue_reqs.value_or(0));
  g.alive = true;
  return g;
}

}  // namespace

void WorkerMetricsTracker::failureEvents(MetricsUpdate& u, const EngineMetrics& m) {
  // The link a failure counter speaks of: a D knows its P; a P names its D only when there is one.
  const bool decode_side = ref_.role != WorkerRole::Prefill;
  const std::int32_t prefill = decode_side ? ref_.peer_prefill : ref_.prefill;
  const WorkerId decode = decode_side ? ref_.worker : ref_.peer_decode;
  const bool link_known = prefill >= 0 && decode != kNoWorker;

  const double failed =
      increase(transfer_failed_, m.num_transfer_failed_reqs_total, "num_transfer_failed_reqs_total", u.notes);
  if (failed > 0) {
    const std::string reason = ref_.name + ": sglang:num_transfer_failed_reqs_total rose by " +
                               formatNumber("%.0f", failed) + " to " +
                               formatNumber("%.0f", *m.num_transfer_failed_reqs_total);
    if (link_known) {
      const int n = std::min(kMaxEventsPerScrape, clampCount(failed));
      for (int i = 0; i < n; ++i) {
        TransferFinished t;
        t.prefill = prefill;
        t.worker = decode;
        t.ok = false;
        t.reason = reason;
        u.events.push_back(std::move(t));
      }
    } else {
      u.notes.push_back(reason + " (the decode worker is unknown: no link event)");
    }
  }
  const double bootstrap =
      increase(bootstrap_failed_, m.num_bootstrap_failed_reqs_total, "num_bootstrap_failed_reqs_total", u.notes);
  if (bootstrap > 0) {
    const std::string reason = ref_.name + ": sglang:num_bootstrap_failed_reqs_total rose by " +
                               formatNumber("%.0f", bootstrap) + " to " +
                               formatNumber("%.0f", *m.num_bootstrap_failed_reqs_total);
    if (link_known) {
      // A failed bootstrap is a failed handshake: the link is suspect, not known dead.
      LinkHealth l;
      l.prefill = prefill;
      l.worker = decode;
      l.state = LinkState::Suspect;
      l.reason = reason;
      l.aborted_requests = clampCount(bootstrap);
      u.events.push_back(std::move(l));
    } else {
      u.notes.push_back(reason + " (the decode worker is unknown: no link event)");
    }
  }
}

MetricsUpdate WorkerMetricsTracker::update(const EngineMetrics& m, SimTime now) {
  MetricsUpdate u;
  u.notes = m.notes;
  u.engine = m.engine;
  markStale(u, m, now);
  if (ref_.role != WorkerRole::Prefill) u.gauges = gaugesOf(ref_, m);
  failureEvents(u, m);
  // Each counter against its own previous value: an engine that exports both (SGLang's retractions
  // appear with the first one) must not difference one against the other.
  const double retracted =
      increase(retracted_, m.num_retracted_requests_total, "num_retracted_requests_total", u.notes);
  const double preempted = increase(preempted_, m.num_preemptions_total, "num_preemptions_total", u.notes);
  u.retracted = m.num_retracted_requests_total ? retracted : preempted;
  prefix_queried_sum_ += increase(prefix_queried_, m.prefix_queried_tokens_total, "prefix cache queries", u.notes);
  prefix_hit_sum_ += increase(prefix_hit_, m.prefix_hit_tokens_total, "prefix cache hits", u.notes);
  external_queried_sum_ +=
      increase(external_queried_, m.external_queried_tokens_total, "external prefix cache queries", u.notes);
  external_hit_sum_ += increase(external_hit_, m.external_hit_tokens_total, "external prefix cache hits", u.notes);
  if (u.gauges) {
    // vLLM 0.8 counted its prefix cache in blocks: in tokens with its block size, else as they are.
    const double unit = m.prefix_block_counted && m.kv_block_size ? *m.kv_block_size : 1.0;
    u.gauges->prefix_queried_tokens = clampTokens(prefix_queried_sum_ * unit);
    u.gauges->prefix_hit_tokens = clampTokens(prefix_hit_sum_ * unit);
    u.gauges->external_queried_tokens = clampTokens(external_queried_sum_);
    u.gauges->external_hit_tokens = clampTokens(external_hit_sum_);
  }
  u.prompt_tokens = increase(prompt_tokens_, m.prompt_tokens_total, "prompt_tokens_total", u.notes);
  u.cached_tokens = increase(cached_tokens_, m.cached_tokens_total, "cached_tokens_total", u.notes);
  u.ttft = interval(ttft_, m.ttft);
  u.e2e = interval(e2e_, m.e2e);
  u.itl = interval(itl_, m.itl);
  u.queue_time = interval(queue_time_, m.queue_time);
  u.kv_transfer_ms = interval(kv_transfer_ms_, m.kv_transfer_latency_hist);
  seen_ = true;
  return u;
}

}  // namespace kvscope
