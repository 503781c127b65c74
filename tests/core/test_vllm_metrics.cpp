// vLLM /metrics as upstream's PrometheusStatLogger prints it (tests/data/upstream_metrics/vllm_*.prom,
// each file's header names the upstream source): the names of three collector generations read into
// the same numbers SGLang's give, data-parallel engines folded, the pool size from the cache config,
// the engine's prefix-cache counters (local and external) turned into the per-worker hit tokens the
// console shows, and preemptions counted as retractions.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/live/ExpositionParser.h"
#include "core/live/VllmMetricsMapper.h"
#include "core/live/WorkerMetricsTracker.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;

namespace {

Exposition exposition(const char* name) {
  std::ifstream in(kvscope::test::testDataPath(std::string("upstream_metrics/") + name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ExpositionParser().parse(ss.str());
}

EngineMetrics scrape(const char* name) { return VllmMetricsMapper::map(exposition(name)); }

LiveWorkerRef decode() {
  LiveWorkerRef r;
  r.name = "D0";
  r.role = WorkerRole::Decode;
  r.worker = 0;
  r.engine = EngineKind::Vllm;
  return r;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

class TestVllmMetrics : public QObject {
  Q_OBJECT
 private slots:
  void everyFixtureParsesAndIsVllm_data() {
    QTest::addColumn<QString>("file");
    for (const char* f : {"vllm_v0_8.prom", "vllm_v0_10.prom", "vllm_v0_18.prom", "vllm_v0_18_2.prom"})
      QTest::newRow(f) << f;
  }
  void everyFixtureParsesAndIsVllm() {
    QFETCH(QString, file);
    const Exposition e = exposition(file.toUtf8().constData());
    QVERIFY2(e.ok(), e.problems.empty() ? "truncated" : e.problems.front().message().c_str());
    QCOMPARE(detectEngine(e), std::optional(EngineKind::Vllm));
    const EngineMetrics m = VllmMetricsMapper::map(e);
    QVERIFY2(m.notes.empty(), m.notes.empty() ? "" : m.notes.front().c_str());
    QCOMPARE(m.engine, EngineKind::Vllm);
    QCOMPARE(m.model_name, std::string("qwen3-32b"));
    QVERIFY(m.num_running_reqs && m.num_queue_reqs && m.token_usage && m.prefix_queried_tokens_total);
    QVERIFY(m.ttft && m.e2e && m.itl && m.queue_time && m.prefill_time);
    // The process' own families are not vLLM's: listed as unread, never silently dropped.
    QVERIFY(contains(m.unread_families, "process_resident_memory_bytes"));
    QVERIFY(!contains(m.unread_families, "vllm:num_requests_running"));
  }

  void v0_8ReadsTheOldNamesAndCountsBlocks() {
    const EngineMetrics m = scrape("vllm_v0_8.prom");
    QCOMPARE(m.ranks, 1);
    QCOMPARE(*m.token_usage, 0.4137);  // gpu_cache_usage_perc
    QCOMPARE(*m.prefix_queried_tokens_total, 178588.0);
    QCOMPARE(*m.prefix_hit_tokens_total, 109932.0);
    QVERIFY(m.prefix_block_counted);   // gpu_prefix_cache_* alone: 0.8 counted blocks
    QVERIFY(!m.max_total_num_tokens);  // num_gpu_blocks="None" in 0.8's cache_config_info
    QVERIFY(m.itl->count > 0);
    QVERIFY(!m.tpot);
    QCOMPARE(*m.num_preemptions_total, 4.0);
  }

  void v0_10FoldsDataParallelEngines() {
    const EngineMetrics m = scrape("vllm_v0_10.prom");
    QCOMPARE(m.ranks, 2);
    QCOMPARE(*m.num_running_reqs, 23.0);  // 14 + 9
    QCOMPARE(*m.num_queue_reqs, 1.0);
    QCOMPARE(*m.token_usage, (0.4862 + 0.3519) / 2);  // a ratio: averaged
    // Both names print in 0.10; the new (token-counted) ones are read and they are not blocks.
    QCOMPARE(*m.prefix_queried_tokens_total, 3388830.0 + 2590614.0);
    QCOMPARE(*m.prefix_hit_tokens_total, 2028576.0 + 1573776.0);
    QVERIFY(!m.prefix_block_counted);
    // Each engine's cache_config_info carries the API server's total (54,000 blocks), not its own.
    QCOMPARE(*m.num_gpu_blocks, 54000.0);
    QCOMPARE(*m.max_total_num_tokens, 54000.0 * 16);
    QCOMPARE(m.ttft->count, 1530.0 + 1188.0);
  }

  void v0_18ReadsExternalHitsAndTokenSources() {
    const EngineMetrics m = scrape("vllm_v0_18.prom");
    QCOMPARE(*m.external_queried_tokens_total, 1024680.0);
    QCOMPARE(*m.external_hit_tokens_total, 353424.0);
    QCOMPARE(m.prompt_tokens_by_source.at("local_cache_hit"), 2574131.0);
    QCOMPARE(m.prompt_tokens_by_source.at("external_kv_transfer"), 353424.0);
    QCOMPARE(*m.cached_tokens_total, 2927552.0);  // prompt_tokens_cached: local + external
    QCOMPARE(*m.max_total_num_tokens, 27000.0 * 16);
    QCOMPARE(*m.kv_block_size, 16.0);
    QVERIFY(m.tpot && m.tpot->count > 0);  // request_time_per_output_token_seconds
  }

  void trackerTurnsTwoScrapesIntoHitTokensAndPreemptions() {
    WorkerMetricsTracker tracker(decode());
    const MetricsUpdate first = tracker.update(scrape("vllm_v0_18.prom"), 0);
    QVERIFY(first.gauges);
    // The first scrape is history: a baseline, nothing counted yet.
    QCOMPARE(first.gauges->prefix_queried_tokens, std::int64_t{0});
    QCOMPARE(first.gauges->kv_capacity, std::int64_t{27000 * 16});
    QCOMPARE(first.gauges->kv_used, std::int64_t{247579});  // round(0.5731 x 432,000)
    QCOMPARE(first.gauges->running, 11);
    QCOMPARE(first.gauges->queued, 2);
    const MetricsUpdate second = tracker.update(scrape("vllm_v0_18_2.prom"), 5'000'000);
    QCOMPARE(second.gauges->prefix_queried_tokens, std::int64_t{4000});
    QCOMPARE(second.gauges->prefix_hit_tokens, std::int64_t{3000});
    QCOMPARE(second.gauges->external_queried_tokens, std::int64_t{1000});
    QCOMPARE(second.gauges->external_hit_tokens, std::int64_t{500});
    QCOMPARE(second.retracted, 2.0);  // num_preemptions 7 -> 9
    QCOMPARE(second.ttft.requests, 10.0);
    QVERIFY(second.notes.empty());
  }

  void blockCountedHitsBecomeTokensWithTheBlockSize() {
    // 0.8 counted blocks; with a block size known (here from a later cache config) they are tokens.
    EngineMetrics a = scrape("vllm_v0_8.prom");
    a.kv_block_size = 16;
    EngineMetrics b = a;
    *b.prefix_queried_tokens_total += 10;
    *b.prefix_hit_tokens_total += 4;
    WorkerMetricsTracker tracker(decode());
    tracker.update(a, 0);
    const MetricsUpdate u = tracker.update(b, 1'000'000);
    QCOMPARE(u.gauges->prefix_queried_tokens, std::int64_t{160});
    QCOMPARE(u.gauges->prefix_hit_tokens, std::int64_t{64});
  }

  void idleVllmGaugesGoStaleWithVllmsReason() {
    WorkerMetricsTracker tracker(decode());
    const EngineMetrics m = scrape("vllm_v0_18.prom");
    tracker.update(m, 0);
    const MetricsUpdate u = tracker.update(m, WorkerMetricsTracker::kStaleAfter + 1);
    QVERIFY(u.stale_for_s);
    QVERIFY2(u.staleReason().find("vLLM") != std::string::npos, u.staleReason().c_str());
  }

  void sglangBodyIsNotVllm() {
    const Exposition e = ExpositionParser().parse("sglang:num_running_reqs{tp_rank=\"0\"} 3\n");
    QCOMPARE(detectEngine(e), std::optional(EngineKind::Sglang));
    const EngineMetrics m = VllmMetricsMapper::map(e);
    QVERIFY(!m.any());
    QVERIFY(!m.notes.empty());
    QVERIFY(mapEngineMetrics(EngineKind::Sglang, e).num_running_reqs);
  }

  void badCacheConfigLabelsAreNoted() {
    const Exposition e = ExpositionParser().parse(
        "vllm:num_requests_running{engine=\"0\"} 1\n"
        "vllm:cache_config_info{block_size=\"x\",engine=\"0\",num_gpu_blocks=\"100\"} 1\n"
        "vllm:kv_cache_usage_perc{engine=\"0\"} -1\n");
    const EngineMetrics m = VllmMetricsMapper::map(e);
    QCOMPARE(*m.num_running_reqs, 1.0);
    QVERIFY(!m.max_total_num_tokens);
    QVERIFY(!m.token_usage);
    QCOMPARE(m.notes.size(), std::size_t{2});
  }
};

QTEST_GUILESS_MAIN(TestVllmMetrics)
#include "test_vllm_metrics.moc"
