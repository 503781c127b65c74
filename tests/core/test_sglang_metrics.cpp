// SGLang /metrics -> KVScope: the mapper on the real docs sample, on current SGLang's labels
// (engine_type, tp_rank, dp_rank, both name prefixes) and the disaggregation gauges; the tracker's
// counter deltas -> link events, resets, and interval latency from histogram deltas.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/live/ExpositionParser.h"
#include "core/live/SglangMetricsMapper.h"
#include "core/live/WorkerMetricsTracker.h"
#include "tests/support/Fixtures.h"

using namespace kvscope;
using kvscope::test::fixture;

namespace {

EngineMetrics mapBody(const std::string& body) { return SglangMetricsMapper::map(ExpositionParser().parse(body)); }

// A decode worker of current SGLang with DP 2 x TP 2: ranks tp=1 repeat tp=0's numbers.
std::string decodeBody(double failed, double bootstrap, double ttft_fast, double ttft_slow,
                       const char* prefix = "sglang:") {
  std::string out;
  const auto line = [&](const std::string& name, const std::string& labels, double v) {
    out += prefix + name + "{" + labels + "} " + std::to_string(v) + "\n";
  };
  for (int dp = 0; dp < 2; ++dp) {
    for (int tp = 0; tp < 2; ++tp) {
      const std::string l = "engine_type=\"decode\",model_name=\"m\",tp_rank=\"" + std::to_string(tp) +
                            "\",dp_rank=\"" + std::to_string(dp) + "\"";
      const double k = tp == 0 ? 1 : 1000;  // a tp=1 value would show up as a huge number
      line("num_used_tokens", l, k * (dp == 0 ? 1000 : 3000));
      line("max_total_num_tokens", l, k * 10000);
      line("token_usage", l, 0.5);
      line("num_running_reqs", l, k * (dp + 2));
      line("num_queue_reqs", l, k * 1);
      line("num_decode_prealloc_queue_reqs", l, k * 2);
      line("num_decode_transfer_queue_reqs", l, k * 3);
      line("kv_transfer_latency_ms", l, dp == 0 ? 10 : 30);
      line("kv_transfer_speed_gb_s", l, 5);
      line("num_transfer_failed_reqs_total", l, k * failed);
      line("num_bootstrap_failed_reqs_total", l, k * bootstrap);
      line("time_to_first_token_seconds_bucket", l + ",le=\"0.5\"", ttft_fast);
      line("time_to_first_token_seconds_bucket", l + ",le=\"5.0\"", ttft_fast + ttft_slow);
      line("time_to_first_token_seconds_bucket", l + ",le=\"+Inf\"", ttft_fast + ttft_slow);
      line("time_to_first_token_seconds_sum", l, ttft_fast * 0.25 + ttft_slow * 3);
      line("time_to_first_token_seconds_count", l, ttft_fast + ttft_slow);
    }
  }
  return out;
}

LiveWorkerRef decodeRef() {
  LiveWorkerRef r;
  r.name = "D1";
  r.role = WorkerRole::Decode;
  r.worker = 1;
  r.peer_prefill = 0;
  return r;
}

}  // namespace

class TestSglangMetrics : public QObject {
  Q_OBJECT
 private slots:
  void docsFixture() {
    const EngineMetrics m = mapBody(fixture("sglang_metrics_sample.txt"));
    QVERIFY2(m.notes.empty(), m.notes.empty() ? "" : m.notes[0].c_str());
    QCOMPARE(m.ranks, 1);
    QCOMPARE(m.model_name, std::string("meta-llama/Llama-3.1-8B-Instruct"));
    QCOMPARE(m.engine_type, std::string());
    QCOMPARE(*m.token_usage, 0.28);
    QCOMPARE(*m.num_used_tokens, 123859.0);
    QVERIFY(!m.max_total_num_tokens);
    QCOMPARE(*m.num_running_reqs, 162.0);
    QCOMPARE(*m.num_queue_reqs, 2826.0);
    QCOMPARE(*m.cache_hit_rate, 0.007507552643049313);
    QCOMPARE(*m.gen_throughput, 86.50814177726902);
    QVERIFY(!m.num_decode_prealloc_queue_reqs && !m.num_transfer_failed_reqs_total);
    QCOMPARE(m.ttft->count, 11008.0);
    QCOMPARE(m.ttft->buckets.size(), std::size_t(21));
    QCOMPARE(m.e2e->count, 11228.0);

    WorkerMetricsTracker tracker(decodeRef());
    const MetricsUpdate u = tracker.update(m);
    QVERIFY(u.gauges);
    QCOMPARE(u.gauges->worker, 1);
    QCOMPARE(u.gauges->kv_used, std::int64_t(123859));
    QCOMPARE(u.gauges->kv_capacity, std::int64_t(442354));  // used / usage: the sample has no capacity
    QCOMPARE(u.gauges->running, 162);
    QCOMPARE(u.gauges->queued, 2826);
    QCOMPARE(u.gauges->pending_seeds, 0);
    QVERIFY(u.events.empty());
    QCOMPARE(u.ttft.requests, 0.0);  // the first scrape is only a baseline
  }

  void vllmIsNotSglang() {
    const EngineMetrics m = mapBody(fixture("vllm_metrics_sample.txt"));
    QVERIFY(!m.any());
    QCOMPARE(m.notes.size(), std::size_t(1));
    QVERIFY(m.notes[0].find("no sglang") != std::string::npos);
  }

  void currentLabelsBothPrefixes_data() {
    QTest::addColumn<QString>("prefix");
    QTest::newRow("colon") << "sglang:";
    QTest::newRow("underscore") << "sglang_";
  }
  void currentLabelsBothPrefixes() {
    QFETCH(QString, prefix);
    const EngineMetrics m = mapBody(decodeBody(4, 1, 10, 0, qPrintable(prefix)));
    QVERIFY2(m.notes.empty(), m.notes.empty() ? "" : m.notes[0].c_str());
    QCOMPARE(m.engine_type, std::string("decode"));
    QCOMPARE(m.ranks, 2);                  // DP ranks; tp_rank 1 is not read
    QCOMPARE(*m.num_used_tokens, 4000.0);  // summed over DP
    QCOMPARE(*m.max_total_num_tokens, 20000.0);
    QCOMPARE(*m.token_usage, 0.2);  // 4000 / 20000, not the mean of the reported 0.5
    QCOMPARE(*m.num_running_reqs, 5.0);
    QCOMPARE(*m.kv_transfer_latency_ms, 20.0);  // averaged
    QCOMPARE(*m.num_transfer_failed_reqs_total, 8.0);
    QCOMPARE(m.ttft->count, 20.0);
    WorkerMetricsTracker tracker(decodeRef());
    const auto g = *tracker.update(m).gauges;
    QCOMPARE(g.kv_used, std::int64_t(4000));
    QCOMPARE(g.kv_capacity, std::int64_t(20000));
    QCOMPARE(g.running, 5);
    QCOMPARE(g.queued, 2);
    QCOMPARE(g.pending_seeds, 10);  // (2 prealloc + 3 transfer) x 2 DP ranks
  }

  void counterIncreasesBecomeLinkEvents() {
    WorkerMetricsTracker tracker(decodeRef());
    QVERIFY(tracker.update(mapBody(decodeBody(4, 1, 10, 0))).events.empty());  // baseline
    const MetricsUpdate u = tracker.update(mapBody(decodeBody(5.5, 3, 30, 10)));
    int transfers = 0, links = 0;
    for (const auto& e : u.events) {
      if (const auto* t = std::get_if<TransferFinished>(&e)) {
        ++transfers;
        QCOMPARE(t->prefill, 0);
        QCOMPARE(t->worker, 1);
        QVERIFY(!t->ok);
        QVERIFY(t->reason.find("num_transfer_failed_reqs_total rose by 3") != std::string::npos);
      } else if (const auto* l = std::get_if<LinkHealth>(&e)) {
        ++links;
        QCOMPARE(l->state, LinkState::Suspect);
        QCOMPARE(l->aborted_requests, 4);
      }
    }
    QCOMPARE(transfers, 3);  // 8 -> 11 summed over two DP ranks
    QCOMPARE(links, 1);
    // 40 new requests since the baseline: 40 fast, 20 slow (per rank x 2).
    QCOMPARE(u.ttft.requests, 60.0);
    QVERIFY(*u.ttft.p50_s <= 0.5);
    QVERIFY(*u.ttft.p99_s > 0.5 && *u.ttft.p99_s <= 5.0);
    QCOMPARE(*u.ttft.mean_s, (40 * 0.25 + 20 * 3.0) / 60);
    // A restarted worker's counters start again: noted, and its count is the increase.
    const MetricsUpdate reset = tracker.update(mapBody(decodeBody(1, 1.5, 1, 0)));
    QVERIFY(!reset.notes.empty());
    QVERIFY(reset.notes[0].find("reset") != std::string::npos);
    QCOMPARE(std::count_if(reset.events.begin(), reset.events.end(),
                           [](auto& e) { return std::holds_alternative<TransferFinished>(e); }),
             2L);
  }

  // Retractions (SGLang, whose series appears with the first one) and preemptions (vLLM) are two
  // counters: the first retraction is not differenced against the preemption count.
  void retractionsAndPreemptionsKeepTheirOwnBaselines() {
    WorkerMetricsTracker tracker(decodeRef());
    EngineMetrics m;
    m.num_preemptions_total = 50;
    QCOMPARE(tracker.update(m).retracted, 0.0);  // baseline
    m.num_preemptions_total = 52;
    QCOMPARE(tracker.update(m).retracted, 2.0);
    m.num_retracted_requests_total = 1;
    const MetricsUpdate first = tracker.update(m);
    QCOMPARE(first.retracted, 1.0);
    for (const std::string& note : first.notes) QVERIFY2(note.find("reset") == std::string::npos, note.c_str());
    m.num_retracted_requests_total = 4;
    m.num_preemptions_total = 60;
    QCOMPARE(tracker.update(m).retracted, 3.0);
  }

  void eventsPerScrapeAreBounded() {
    WorkerMetricsTracker tracker(decodeRef());
    tracker.update(mapBody(decodeBody(0, 0, 0, 0)));
    const MetricsUpdate u = tracker.update(mapBody(decodeBody(1e6, 0, 0, 0)));
    QCOMPARE(u.events.size(), std::size_t(WorkerMetricsTracker::kMaxEventsPerScrape));
  }

  void prefillWorkerWithoutAKnownDecode() {
    LiveWorkerRef p;
    p.name = "P0";
    p.role = WorkerRole::Prefill;
    p.prefill = 0;
    WorkerMetricsTracker tracker(p);
    tracker.update(mapBody(decodeBody(0, 0, 0, 0)));
    const MetricsUpdate u = tracker.update(mapBody(decodeBody(2, 0, 0, 0)));
    QVERIFY(!u.gauges);
    QVERIFY(u.events.empty());
    QVERIFY(u.notes.back().find("decode worker is unknown") != std::string::npos);
  }

  void badLabelsAndValuesAreNoted() {
    const EngineMetrics m = mapBody(
        "sglang:num_running_reqs{tp_rank=\"x\"} 3\n"
        "sglang:num_queue_reqs{tp_rank=\"0\"} NaN\n"
        "sglang:num_used_tokens{tp_rank=\"0\"} -5\n"
        "sglang:token_usage{tp_rank=\"0\"} 0.5\n"
        "sglang:time_to_first_token_seconds_bucket{le=\"1\"} 3\n");
    QVERIFY(!m.num_running_reqs && !m.num_queue_reqs && !m.num_used_tokens);
    QCOMPARE(*m.token_usage, 0.5);
    QVERIFY(!m.ttft);
    QCOMPARE(m.notes.size(), std::size_t(4));
  }

  void quantile() {
    const std::vector<std::pair<double, double>> b{{1, 10}, {2, 20}, {INFINITY, 20}};
    QCOMPARE(*WorkerMetricsTracker::quantile(b, 0.5), 1.0);
    QCOMPARE(*WorkerMetricsTracker::quantile(b, 0.75), 1.5);
    QVERIFY(!WorkerMetricsTracker::quantile({{1, 0}, {INFINITY, 0}}, 0.5));
    QCOMPARE(*WorkerMetricsTracker::quantile({{1, 0}, {INFINITY, 5}}, 0.5), 1.0);
  }
};

QTEST_GUILESS_MAIN(TestSglangMetrics)
#include "test_sglang_metrics.moc"
