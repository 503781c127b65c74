// SGLang /metrics as upstream's collectors print it, old and new (tests/data/upstream_metrics, the
// upstream file and version in each file's header and in its README): renamed and re-typed metrics
// read under both names, the pool breakdown and the other gauges users expect, the first failure
// on a worker counted, frozen gauges shown as stale; and the twin's pool reporting the same two
// quantities (held vs evictable) as SGLang's num_used_tokens / kv_evictable_tokens.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/live/ExpositionParser.h"
#include "core/live/SglangMetricsMapper.h"
#include "core/live/WorkerMetricsTracker.h"
#include "core/sim/KvPool.h"
#include "tests/support/BuildTree.h"

using namespace kvscope;

namespace {

std::string body(const char* name) {
  std::ifstream in(kvscope::test::testDataPath(std::string("upstream_metrics/") + name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

EngineMetrics scrape(const char* name) {
  const Exposition e = ExpositionParser().parse(body(name));
  if (!e.ok()) qWarning("%s: %s", name, e.problems.empty() ? "truncated" : e.problems.front().message().c_str());
  return SglangMetricsMapper::map(e);
}

LiveWorkerRef ref(WorkerRole role) {
  LiveWorkerRef r;
  r.name = role == WorkerRole::Prefill ? "P0" : "D0";
  r.role = role;
  r.worker = role == WorkerRole::Prefill ? kNoWorker : 0;
  r.prefill = role == WorkerRole::Prefill ? 0 : -1;
  r.peer_prefill = 0;
  r.peer_decode = 0;
  return r;
}

int failedTransfers(const MetricsUpdate& u) {
  int n = 0;
  for (const auto& e : u.events)
    if (const auto* t = std::get_if<TransferFinished>(&e)) n += !t->ok;
  return n;
}

}  // namespace

class TestUpstreamMetrics : public QObject {
  Q_OBJECT
 private slots:
  void everyFixtureParsesCleanly_data() {
    QTest::addColumn<QString>("file");
    for (const char* f : {"sglang_decode_old.prom", "sglang_decode_old_2.prom", "sglang_prefill_old.prom",
                          "sglang_prefill_new.prom", "sglang_decode_new.prom", "sglang_decode_new_2.prom"})
      QTest::newRow(f) << f;
  }
  void everyFixtureParsesCleanly() {
    QFETCH(QString, file);
    const Exposition e = ExpositionParser().parse(body(qPrintable(file)));
    QVERIFY(e.samples >= 9);
    QVERIFY2(e.ok(), e.problems.empty() ? "truncated" : e.problems.front().message().c_str());
    const EngineMetrics m = SglangMetricsMapper::map(e);
    QVERIFY2(m.notes.empty(), m.notes.empty() ? "" : m.notes.front().c_str());
    QCOMPARE(m.ranks, 1);
  }

  // A labelled counter has no series until its first increment; the scrape where it appears at 1
  // is that failure, not a baseline.
  void firstFailureIsNotLost() {
    WorkerMetricsTracker tracker(ref(WorkerRole::Decode));
    const MetricsUpdate first = tracker.update(scrape("sglang_decode_old.prom"), 0);
    QCOMPARE(failedTransfers(first), 0);
    const MetricsUpdate second = tracker.update(scrape("sglang_decode_old_2.prom"), 5'000'000);
    QCOMPARE(failedTransfers(second), 1);
    const auto& t = std::get<TransferFinished>(second.events.front());
    QCOMPARE(t.worker, 0);
    QCOMPARE(t.prefill, 0);
    QVERIFY(t.reason.find("rose by 1 to 1") != std::string::npos);
    // Seen on the very first scrape, the same counter is history: a baseline, no event.
    WorkerMetricsTracker late(ref(WorkerRole::Decode));
    QCOMPARE(failedTransfers(late.update(scrape("sglang_decode_old_2.prom"), 0)), 0);
  }

  void renamedQueueReadUnderBothNames() {
    const EngineMetrics old_p = scrape("sglang_prefill_old.prom");
    const EngineMetrics new_p = scrape("sglang_prefill_new.prom");
    QCOMPARE(old_p.engine_type, std::string("prefill"));
    QCOMPARE(*old_p.num_prefill_bootstrap_queue_reqs, 5.0);  // num_prefill_prealloc_queue_reqs
    QCOMPARE(*new_p.num_prefill_bootstrap_queue_reqs, 5.0);  // num_prefill_bootstrap_queue_reqs
    QCOMPARE(*new_p.num_prefill_inflight_queue_reqs, 2.0);
  }

  void transferMetricsAsGaugesOrHistograms() {
    const EngineMetrics old_p = scrape("sglang_prefill_old.prom");
    QCOMPARE(*old_p.kv_transfer_latency_ms, 412.0);
    QCOMPARE(*old_p.kv_transfer_speed_gb_s, 18.5);
    QVERIFY(!old_p.kv_transfer_latency_hist && !old_p.kv_transfer_speed_hist);
    const EngineMetrics new_p = scrape("sglang_prefill_new.prom");
    QVERIFY(!new_p.kv_transfer_latency_ms && !new_p.kv_transfer_speed_gb_s);
    QCOMPARE(new_p.kv_transfer_latency_hist->count, 10.0);
    QCOMPARE(new_p.kv_transfer_latency_hist->sum, 2950.0);
    QCOMPARE(new_p.kv_transfer_latency_hist->buckets.size(), std::size_t(13));
    QCOMPARE(new_p.kv_transfer_speed_hist->count, 10.0);
    // Counted since the first scrape: the histogram first seen after it is all new transfers.
    WorkerMetricsTracker tracker(ref(WorkerRole::Prefill));
    tracker.update(scrape("sglang_prefill_old.prom"), 0);
    const MetricsUpdate u = tracker.update(new_p, 1'000'000);
    QCOMPARE(u.kv_transfer_ms.requests, 10.0);
    QCOMPARE(*u.kv_transfer_ms.mean_s, 295.0);  // ms, as the histogram counts them
  }

  void poolBreakdownAndWhatUsersExpect() {
    const EngineMetrics m = scrape("sglang_decode_new.prom");
    QCOMPARE(*m.kv_available_tokens, 142385.0);
    QCOMPARE(*m.kv_evictable_tokens, 120000.0);
    QCOMPARE(*m.kv_used_tokens, 182340.0);
    QCOMPARE(*m.pending_prealloc_token_usage, 0.07);
    QCOMPARE(*m.num_retracted_reqs, 0.0);
    QCOMPARE(*m.num_paused_reqs, 0.0);
    QVERIFY(!m.num_retracted_requests_total);  // no retraction yet: no series
    QCOMPARE(m.per_stage.size(), std::size_t(2));
    QCOMPARE(m.per_stage.at("decode_transfer_queue").count, 70.0);
    QCOMPARE(m.queue_time->count, 70.0);
    QCOMPARE(m.itl->count, 2000.0);

    WorkerMetricsTracker tracker(ref(WorkerRole::Decode));
    const MetricsUpdate a = tracker.update(m, 0);
    // kv_used is num_used_tokens (locked or held), the evictable radix cache beside it.
    QCOMPARE(a.gauges->kv_used, std::int64_t(182340));
    QCOMPARE(a.gauges->kv_evictable, std::int64_t(120000));
    QCOMPARE(a.gauges->kv_capacity, std::int64_t(444725));
    QVERIFY(a.gauges->kv_used + a.gauges->kv_evictable + 142385 <= a.gauges->kv_capacity);
    QCOMPARE(a.retracted, 0.0);
    const MetricsUpdate b = tracker.update(scrape("sglang_decode_new_2.prom"), 5'000'000);
    QCOMPARE(b.gauges->kv_evictable, std::int64_t(150000));
    QCOMPARE(b.retracted, 2.0);  // the counter's series appeared at 2
    QCOMPARE(b.prompt_tokens, 150000.0);
    QCOMPARE(b.cached_tokens, 120000.0);
    QCOMPARE(b.queue_time.requests, 10.0);
    QCOMPARE(*b.queue_time.mean_s, (17.1 - 9.5) / 10);
    QCOMPARE(b.itl.requests, 1000.0);
    QVERIFY(*b.itl.p50_s > 0.025 && *b.itl.p50_s <= 0.035);
    QVERIFY(!b.stale_for_s);
  }

  // An older worker without the breakdown: num_used_tokens as before, evictable unknown (0).
  void olderWorkerWithoutBreakdown() {
    WorkerMetricsTracker tracker(ref(WorkerRole::Decode));
    const auto g = *tracker.update(scrape("sglang_decode_old.prom"), 0).gauges;
    QCOMPARE(g.kv_used, std::int64_t(182340));
    QCOMPARE(g.kv_evictable, std::int64_t(0));
    QCOMPARE(g.pending_seeds, 4);
  }

  void frozenGaugesBecomeStale() {
    WorkerMetricsTracker tracker(ref(WorkerRole::Decode));
    const EngineMetrics idle = scrape("sglang_decode_new.prom");
    QVERIFY(!tracker.update(idle, 0).stale_for_s);
    QVERIFY(!tracker.update(idle, 29'000'000).stale_for_s);
    const MetricsUpdate stale = tracker.update(idle, 31'000'000);
    QVERIFY(stale.stale_for_s);
    QCOMPARE(*stale.stale_for_s, 31.0);
    QVERIFY(stale.staleReason().find("stale: gauges unchanged for 31 s") == 0);
    // The next batch log changes them: current again.
    QVERIFY(!tracker.update(scrape("sglang_decode_new_2.prom"), 32'000'000).stale_for_s);
  }

  // The twin's pool: with block-level eviction an idle session's KV is evictable radix cache
  // (outside num_used_tokens); a running request's chain is locked; with session-level eviction
  // the idle session's KV is held by its streaming session (inside num_used_tokens).
  void twinReportsHeldAndEvictableAsUpstream() {
    const std::vector<BlockHash> shared{1, 2, 3, 4}, a{1, 2, 3, 4, 10, 11}, b{1, 2, 3, 4, 20};
    KvPool block(0, 10'000, 24, EvictionGranularity::Block, nullptr);
    block.commit(1, a, 6 * 24 + 5);  // session 1: 6 blocks + 5-token tail
    block.commit(2, b, 5 * 24);      // session 2: shares 4 blocks with session 1
    QCOMPARE(block.used(), std::int64_t(7 * 24 + 5));
    QCOMPARE(block.evictableTokens(), block.used());  // nothing locked: all radix cache
    QCOMPARE(block.heldTokens(), std::int64_t(0));
    block.lock(2);       // a turn of session 2 runs
    block.reserve(100);  // its new tokens
    QCOMPARE(block.heldTokens(), std::int64_t(5 * 24 + 100));
    QCOMPARE(block.evictableTokens(), std::int64_t(2 * 24 + 5));  // session 1's own blocks and tail
    QCOMPARE(block.heldPeakSinceReset(), std::int64_t(5 * 24 + 100));
    block.lock(1);
    QCOMPARE(block.evictableTokens(), std::int64_t(0));
    block.unlock(1);
    block.unlock(2);
    block.unreserve(100);
    QCOMPARE(block.evictableTokens(), block.used());
    QCOMPARE(block.heldPeakSinceReset(), std::int64_t(7 * 24 + 5 + 100));
    block.resetPeak();
    QCOMPARE(block.heldPeakSinceReset(), std::int64_t(0));

    KvPool session(0, 10'000, 24, EvictionGranularity::Session, nullptr);
    session.commit(1, a, 6 * 24 + 5);
    QCOMPARE(session.evictableTokens(), std::int64_t(0));
    QCOMPARE(session.heldTokens(), session.used());
    (void)shared;
  }
};

QTEST_GUILESS_MAIN(TestUpstreamMetrics)
#include "test_upstream_metrics.moc"
