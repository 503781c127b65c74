// `kvscope-cli scrape`: what KVScope reads from an engine's /metrics (SGLang or vLLM), for a live
// URL or a saved answer: every gauge, counter and histogram the metrics mapper understood, the pool
// it derives, and the families it did not read. As `logs` is for log lines and `kv-events` for KV
// event endpoints: a way to check, before a cluster file names the worker, that KVScope understands it.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "backend/live/MetricsScraper.h"
#include "core/io/InputFile.h"
#include "core/live/ExpositionParser.h"
#include "core/live/VllmMetricsMapper.h"
#include "core/live/WorkerMetricsTracker.h"
#include "core/model/Error.h"

namespace kvscope::cli {

namespace {

void put(nlohmann::json& j, const char* name, const std::optional<double>& v) {
  if (v) j[name] = *v;
}

nlohmann::json histogram(const LatencyHistogram& h) {
  nlohmann::json j{{"count", h.count}, {"sum", h.sum}};
  if (h.count > 0) j["mean"] = h.sum / h.count;
  if (const auto p = WorkerMetricsTracker::quantile(h.buckets, 0.5)) j["p50"] = *p;
  if (const auto p = WorkerMetricsTracker::quantile(h.buckets, 0.99)) j["p99"] = *p;
  return j;
}

// Every field of EngineMetrics the engine exported, under KVScope's names (EngineMetrics.h).
nlohmann::json describe(const EngineMetrics& m) {
  nlohmann::json gauges = nlohmann::json::object(), counters = nlohmann::json::object();
  put(gauges, "token_usage", m.token_usage);
  put(gauges, "num_used_tokens", m.num_used_tokens);
  put(gauges, "max_total_num_tokens", m.max_total_num_tokens);
  put(gauges, "kv_available_tokens", m.kv_available_tokens);
  put(gauges, "kv_evictable_tokens", m.kv_evictable_tokens);
  put(gauges, "kv_used_tokens", m.kv_used_tokens);
  put(gauges, "pending_prealloc_token_usage", m.pending_prealloc_token_usage);
  put(gauges, "num_running_reqs", m.num_running_reqs);
  put(gauges, "num_queue_reqs", m.num_queue_reqs);
  put(gauges, "cache_hit_rate", m.cache_hit_rate);
  put(gauges, "gen_throughput", m.gen_throughput);
  put(gauges, "num_retracted_reqs", m.num_retracted_reqs);
  put(gauges, "num_paused_reqs", m.num_paused_reqs);
  put(gauges, "num_decode_prealloc_queue_reqs", m.num_decode_prealloc_queue_reqs);
  put(gauges, "num_decode_transfer_queue_reqs", m.num_decode_transfer_queue_reqs);
  put(gauges, "num_prefill_bootstrap_queue_reqs", m.num_prefill_bootstrap_queue_reqs);
  put(gauges, "num_prefill_inflight_queue_reqs", m.num_prefill_inflight_queue_reqs);
  put(gauges, "kv_transfer_latency_ms", m.kv_transfer_latency_ms);
  put(gauges, "kv_transfer_speed_gb_s", m.kv_transfer_speed_gb_s);
  put(gauges, "kv_block_size", m.kv_block_size);
  put(gauges, "num_gpu_blocks", m.num_gpu_blocks);
  put(counters, "num_retracted_requests_total", m.num_retracted_requests_total);
  put(counters, "num_preemptions_total", m.num_preemptions_total);
  put(counters, "prompt_tokens_total", m.prompt_tokens_total);
  put(counters, "cached_tokens_total", m.cached_tokens_total);
  put(counters, "generation_tokens_total", m.generation_tokens_total);
  put(counters, "prefix_queried_tokens_total", m.prefix_queried_tokens_total);
  put(counters, "prefix_hit_tokens_total", m.prefix_hit_tokens_total);
  put(counters, "external_queried_tokens_total", m.external_queried_tokens_total);
  put(counters, "external_hit_tokens_total", m.external_hit_tokens_total);
  put(counters, "num_transfer_failed_reqs_total", m.num_transfer_failed_reqs_total);
  put(counters, "num_bootstrap_failed_reqs_total", m.num_bootstrap_failed_reqs_total);
  for (const auto& [source, v] : m.prompt_tokens_by_source) counters["prompt_tokens_by_source"][source] = v;
  nlohmann::json hists = nlohmann::json::object();
  const std::pair<const char*, const std::optional<LatencyHistogram>*> all[] = {
      {"ttft_seconds", &m.ttft},
      {"e2e_seconds", &m.e2e},
      {"itl_seconds", &m.itl},
      {"queue_time_seconds", &m.queue_time},
      {"tpot_seconds", &m.tpot},
      {"prefill_time_seconds", &m.prefill_time},
      {"kv_transfer_latency_ms", &m.kv_transfer_latency_hist},
      {"kv_transfer_speed_gb_s", &m.kv_transfer_speed_hist}};
  for (const auto& [name, h] : all)
    if (*h) hists[name] = histogram(**h);
  for (const auto& [stage, h] : m.per_stage) hists["per_stage_seconds"][stage] = histogram(h);
  nlohmann::json j{{"engine", toString(m.engine)}, {"model_name", m.model_name}, {"ranks", m.ranks}, {"gauges", gauges},
                   {"counters", counters},         {"histograms", hists}};
  if (!m.engine_type.empty()) j["engine_type"] = m.engine_type;
  if (m.prefix_block_counted) j["prefix_counted_in"] = "blocks";
  if (m.prefix_queried_tokens_total && *m.prefix_queried_tokens_total > 0 && m.prefix_hit_tokens_total)
    j["prefix_hit_rate"] = *m.prefix_hit_tokens_total / *m.prefix_queried_tokens_total;
  if (m.external_queried_tokens_total && *m.external_queried_tokens_total > 0 && m.external_hit_tokens_total)
    j["external_hit_rate"] = *m.external_hit_tokens_total / *m.external_queried_tokens_total;
  j["unread_families"] = m.unread_families;
  j["notes"] = m.notes;
  return j;
}

}  // namespace

Command addScrape(CLI::App& app) {
  auto* sub = app.add_subcommand("scrape", "Print what KVScope reads from an engine's /metrics (SGLang or vLLM)");
  sub->footer(
      "One JSON object per source: the engine, every gauge, counter and histogram understood (latency\n"
      "histograms as count, mean, p50, p99 over the engine's whole life), the prefix hit rate, the\n"
      "families not read, and problems (line, field, what was expected). A source that cannot be read\n"
      "prints an object with its error and the command exits 1.\n"
      "  kvscope-cli scrape http://10.0.0.7:8000/metrics\n"
      "  kvscope-cli scrape --engine vllm saved-metrics.txt");
  auto sources = std::make_shared<std::vector<std::string>>();
  auto engine = std::make_shared<std::string>("auto");
  auto format = std::make_shared<std::string>("json");
  auto timeout = std::make_shared<double>(3.0);
  sub->add_option("sources", *sources, "http://HOST:PORT/metrics URLs, or files holding a /metrics answer")->required();
  sub->add_option("--engine", *engine, "Whose metrics: sglang, vllm, or auto (by the families' prefix)")
      ->check(CLI::IsMember({"auto", "sglang", "vllm"}))
      ->capture_default_str();
  sub->add_option("--timeout", *timeout, "Seconds a URL has to answer in full")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  sub->add_option("--format", *format, "Output format")->check(CLI::IsMember({"json"}))->capture_default_str();
  return [sources, engine, format, timeout] {
    int failed = 0;
    for (const auto& source : *sources) {
      nlohmann::json j{{"source", source}};
      std::string body;
      if (source.starts_with("http://") || source.starts_with("https://")) {
        ScrapeOptions options;
        options.deadline_ms = static_cast<int>(*timeout * 1000);
        options.read_timeout_ms = options.deadline_ms;
        const MetricsFetch answer = MetricsScraper::fetch(source, options);
        j["seconds"] = answer.seconds;
        if (answer.health != WorkerHealth::Ok) j["error"] = answer.reason;
        body = answer.body;
      } else {
        try {
          body = InputFile::readAll(source, ExpositionLimits{}.max_body_bytes);
        } catch (const InputError& e) {
          j["error"] = e.what();
        }
      }
      if (j.contains("error")) {
        ++failed;
        std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        continue;
      }
      const Exposition exposition = ExpositionParser().parse(body);
      std::optional<EngineKind> kind = *engine == "vllm"     ? std::optional(EngineKind::Vllm)
                                       : *engine == "sglang" ? std::optional(EngineKind::Sglang)
                                                             : detectEngine(exposition);
      if (!kind) {
        j["error"] = "neither vllm: nor sglang: metrics in the answer; name the engine with --engine";
        j["families"] = exposition.families.size();
        ++failed;
      } else {
        j.update(describe(mapEngineMetrics(*kind, exposition)));
      }
      nlohmann::json problems = nlohmann::json::array();
      for (const auto& p : exposition.problems) problems.push_back(p.message());
      j["problems"] = problems;
      if (exposition.problems_dropped) j["problems_dropped"] = exposition.problems_dropped;
      if (exposition.truncated) j["truncated"] = true;
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    std::fflush(stdout);
    return failed ? 1 : 0;
  };
}

}  // namespace kvscope::cli
