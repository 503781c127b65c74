// In the core: free text from outside is cut to a stated size with a
// visible marker (EventLimits), every number of a router's observation is checked before anything is
// applied (ObservationCheck, through LiveRouter), and totals fed by hostile numbers never go
// negative or wrap (SummaryCollector).
#include <QtTest>

#include <climits>

#include "core/events/EventLimits.h"
#include "core/metrics/SummaryCollector.h"
#include "core/run/LiveRouter.h"

using namespace kvscope;

namespace {
LiveClusterSpec twoWorkers() {
  LiveClusterSpec spec;
  spec.workers.push_back({"D0", WorkerRole::Decode, 2400});  // 100 blocks of 24 tokens
  spec.workers.push_back({"D1", WorkerRole::Decode, 100'000});
  spec.prefill.push_back({"P0", WorkerRole::Prefill, 0});
  return spec;
}
struct Collect : EventSink {
  std::vector<Event> events;
  void onEvent(const Event& e) override { events.push_back(e); }
};
}  // namespace

class TestObservationLimits : public QObject {
  Q_OBJECT
 private slots:
  void longTextIsCutWithAMarker() {
    std::string traceback = "Traceback (most recent call last):\n" + std::string(4 << 20, 'x') + "\nRuntimeError: boom";
    const std::size_t before = traceback.size();
    QVERIFY(capText(traceback, kMaxReasonBytes));
    QVERIFY(traceback.size() <= kMaxReasonBytes);
    QVERIFY(traceback.rfind("Traceback", 0) == 0);
    QVERIFY(traceback.ends_with("RuntimeError: boom"));  // the exception survives
    const auto marker = traceback.find("\n[... ");
    const auto marker_end = traceback.find(" bytes cut ...]\n");
    QVERIFY(marker != std::string::npos && marker_end != std::string::npos);
    const std::size_t cut = std::stoull(traceback.substr(marker + 6));
    QCOMPARE(marker + (traceback.size() - (marker_end + 16)) + cut, before);  // head + tail + cut
    std::string short_text = "fine";
    QVERIFY(!capText(short_text, kMaxReasonBytes));
    QCOMPARE(short_text, std::string("fine"));
    // A multi-byte character is never split.
    std::string utf8;
    for (int i = 0; i < 1000; ++i) utf8 += "\xE2\x82\xAC";  // the euro sign, 3 bytes
    QVERIFY(capText(utf8, 100));
    QVERIFY(utf8.size() <= 100);
    const auto head = utf8.substr(0, utf8.find("\n["));
    QCOMPARE(head.size() % 3, std::size_t{0});
    const auto tail = utf8.substr(utf8.find("]\n") + 2);
    QCOMPARE(tail.size() % 3, std::size_t{0});
  }

  void everyFreeTextFieldIsCapped() {
    const std::string huge(1 << 20, 'r');
    EventPayload crash = WorkerCrashed{0, huge, 1};
    QVERIFY(exceedsTextLimits(crash));
    QVERIFY(capEventText(crash));
    QVERIFY(!exceedsTextLimits(crash));
    QVERIFY(std::get<WorkerCrashed>(crash).reason.size() <= kMaxReasonBytes);
    EventPayload done = RequestDone{};
    std::get<RequestDone>(done).error = huge;
    QVERIFY(capEventText(done));
    QVERIFY(std::get<RequestDone>(done).error.find("bytes cut") != std::string::npos);
    EventPayload knob = KnobChanged{huge, 1, 2, huge, {}};
    QVERIFY(capEventText(knob));
    QVERIFY(std::get<KnobChanged>(knob).who.size() <= kMaxLabelBytes);
    EventPayload fine = Eviction{0, 1, 100};
    QVERIFY(!exceedsTextLimits(fine));
    QVERIFY(kMaxReasonBytes < kMaxEventBytes && kMaxEventBytes < kClientReceiveLimitBytes);
  }

  void observationNumbersAreChecked() {
    Collect c;
    LiveRouter router(twoWorkers(), {&c});
    const std::size_t published = c.events.size();
    struct Bad {
      EventPayload payload;
      std::string error;
    };
    RequestDone negative_ttft{1, 1, 1, 0, RoutePath::Direct, RequestStatus::Ok, -5, 1000, 10, 10, {}};
    RequestDone ttft_after_e2e{1, 1, 1, 0, RoutePath::Direct, RequestStatus::Ok, 2000, 1000, 10, 10, {}};
    RequestDone huge_prompt{1, 1, 1, 0, RoutePath::Direct, RequestStatus::Ok, 10, 1000, std::int64_t{1} << 40, 10, {}};
    const std::vector<Bad> bad{
        {Admission{1, 1, 0, AdmissionResult::Admitted, RoutePath::Seed, -5}, "admission.tokens: -5 is negative"},
        {Admission{1, 1, 0, AdmissionResult::Admitted, RoutePath::Seed, 2401},
         "admission.tokens: 2401 is over the worker's KV capacity (2400)"},
        {Eviction{1, 1, INT64_MIN}, "eviction.tokens_freed: -9223372036854775808 is negative"},
        {Eviction{1, 1, 10, EvictionGranularity::Session, -1}, "eviction.sessions_hit: -1 is negative"},
        {WorkerCrashed{0, "x", INT32_MIN}, "crash.aborted_requests: -2147483648 is negative"},
        {LinkHealth{0, 1, LinkState::Dead, "x", -3}, "link.aborted_requests: -3 is negative"},
        {TransferStarted{1, 0, 1, 10, -1, 0}, "transfer_start.bytes: -1 is negative"},
        {TransferFinished{1, 0, 1, 10, 10, true, {}}, ""},
        {Correction{0, 1, 1, -1, 0, 0}, "correction.fill_len: -1 is negative"},
        {negative_ttft, "request_done.ttft_us: -5 is below -1"},
        {ttft_after_e2e, "request_done.ttft_us: 2000 is after e2e_us (1000)"},
        {huge_prompt, "request_done.input_tokens: 1099511627776 is over the most tokens a request may have"},
    };
    std::size_t accepted = 0;
    for (const auto& b : bad) {
      std::string error;
      const bool ok = router.observe(b.payload, &error);
      if (b.error.empty()) {
        QVERIFY2(ok, error.c_str());
        ++accepted;
        continue;
      }
      QVERIFY2(!ok, b.error.c_str());
      QVERIFY2(error.rfind(b.error, 0) == 0, error.c_str());
    }
    QCOMPARE(c.events.size(), published + accepted);  // nothing refused was published
  }

  void storedBlocksCannotOverfillAWorker() {
    Collect c;
    LiveRouter router(twoWorkers(), {&c});
    std::vector<BlockHash> hundred, more;
    for (BlockHash h = 1; h <= 100; ++h) hundred.push_back(h);
    for (BlockHash h = 101; h <= 101; ++h) more.push_back(h);
    std::string error;
    QVERIFY2(router.blocksStored(0, 1, hundred, &error), error.c_str());
    QVERIFY2(router.blocksStored(0, 1, hundred, &error), error.c_str());  // the same blocks again: no new tokens
    QVERIFY(!router.blocksStored(0, 1, more, &error));
    QVERIFY2(error.find("would make D0 hold 2424 tokens, over its KV capacity of 2400") != std::string::npos,
             error.c_str());
    QVERIFY(router.blocksRemoved(0, std::vector<BlockHash>{1}, &error));
    QVERIFY2(router.blocksStored(0, 1, more, &error), error.c_str());
    // Removing blocks it never held leaves the count at zero, never below.
    QVERIFY(router.blocksRemoved(1, hundred, &error));
    router.publishSnapshot();
    const auto& snap = std::get<Snapshot>(c.events.back().payload);
    QCOMPARE(snap.workers[0].kv_used, std::int64_t{2400});
    QCOMPARE(snap.workers[1].kv_used, std::int64_t{0});
  }

  // A recording is not checked like a Report: its numbers reach the summary as they are, and the
  // summary neither goes negative nor wraps.
  void summaryTotalsNeverWrap() {
    SummaryCollector s;
    RunStarted run;
    run.workers.push_back({"D0", WorkerRole::Decode, 1000});
    s.onEvent({1, 0, run});
    s.onEvent({2, 1, WorkerCrashed{0, "x", INT32_MIN}});
    s.onEvent({3, 2, WorkerCrashed{0, "x", INT32_MAX}});
    s.onEvent({4, 3, Eviction{0, 1, INT64_MIN}});
    for (int i = 0; i < 3; ++i)
      s.onEvent({5u + static_cast<unsigned>(i), 4,
                 RequestDone{1, 1, 1, 0, RoutePath::Direct, RequestStatus::Ok, 1, 2, INT64_MAX, INT64_MIN, {}}});
    const RunSummary summary = s.summary();
    QCOMPARE(summary.aborted_requests, long{INT32_MAX});
    QCOMPARE(summary.workers[0].tokens_served, static_cast<long long>(INT64_MAX));
    QVERIFY(summary.eviction_mean_tokens >= 0);
  }
};

QTEST_GUILESS_MAIN(TestObservationLimits)
#include "test_observation_limits.moc"
