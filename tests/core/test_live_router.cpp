// The router core driving a real cluster (LiveRouter): the simulator's path rule on reported state,
// the loads the policies read follow what the cluster reports, bad observations change nothing,
// and knob and policy changes reach watchers and the event stream.
#include <QtTest>

#include "core/run/LiveRouter.h"
#include "core/model/Error.h"

using namespace kvscope;

namespace {
struct Collect : EventSink {
  std::vector<Event> events;
  void onEvent(const Event& e) override { events.push_back(e); }
  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const Event& e : events)
      if (const auto* p = std::get_if<T>(&e.payload)) out.push_back(*p);
    return out;
  }
};

LiveClusterSpec threeWorkers(double k = 0) {
  LiveClusterSpec spec;
  for (const char* n : {"D0", "D1", "D2"}) spec.workers.push_back({n, WorkerRole::Decode, 100'000});
  spec.prefill.push_back({"P0", WorkerRole::Prefill, 0});
  spec.knobs["K"] = k;
  return spec;
}

std::vector<BlockHash> prompt(SessionId session, int blocks) {
  std::vector<BlockHash> h;
  for (int i = 0; i < blocks; ++i) h.push_back((session << 20) + static_cast<BlockHash>(i));
  return h;
}

LiveRouter::RouteInput turn(RequestId id, SessionId session, int turn_no, const std::vector<BlockHash>& hashes) {
  return {id, session, turn_no, static_cast<std::int64_t>(hashes.size()) * 24, hashes, {}};
}

WorkerGauges gaugesOf(const Collect& c, WorkerId w) {
  return c.all<Snapshot>().back().workers[static_cast<std::size_t>(w)];
}
}  // namespace

class LiveRouterTest : public QObject {
  Q_OBJECT
 private slots:
  void aSessionSeedsThenAppendsDirectThenReseedsAfterEviction() {
    Collect c;
    LiveRouter router(threeWorkers(), {&c});
    const auto first = prompt(7, 40);
    const auto r1 = router.route(turn(1, 7, 1, first));
    QCOMPARE(r1.path, RoutePath::Seed);
    const WorkerId w = r1.decision.chosen;
    QVERIFY(w != kNoWorker);
    QVERIFY(router.blocksStored(w, 7, first, nullptr));
    QVERIFY(router.observe(RequestDone{1, 7, 1, w, RoutePath::Seed, RequestStatus::Ok, 1000, 5000, 960, 10, {}}, nullptr));

    auto second = prompt(7, 45);  // the history grew by five blocks: within direct_max_uncached_tokens
    const auto r2 = router.route(turn(2, 7, 2, second));
    QCOMPARE(r2.decision.chosen, w);  // sticky: its cache is there
    QCOMPARE(r2.path, RoutePath::Direct);

    QVERIFY(router.observe(Eviction{w, 7, 960, EvictionGranularity::Session, 1}, nullptr));
    QVERIFY(router.blocksRemoved(w, first, nullptr));
    const auto r3 = router.route(turn(3, 7, 3, prompt(7, 50)));
    QCOMPARE(r3.path, RoutePath::Reseed);  // seeded before, cache gone

    QCOMPARE(c.all<RouteDecision>().size(), std::size_t{3});
    QCOMPARE(r3.seq, c.events.back().seq);
    QVERIFY(std::holds_alternative<RunStarted>(c.events.front().payload));
  }

  void turnsBelowSeedMinTurnAreTransient() {
    LiveClusterSpec spec = threeWorkers();
    spec.knobs["seed_min_turn_id"] = 2;
    Collect c;
    LiveRouter router(spec, {&c});
    QCOMPARE(router.route(turn(1, 9, 1, prompt(9, 10))).path, RoutePath::Transient);
    QCOMPARE(router.route(turn(2, 9, 2, prompt(9, 12))).path, RoutePath::Seed);
  }

  void loadsFollowWhatTheClusterReports() {
    Collect c;
    LiveRouter router(threeWorkers(), {&c});
    const auto h = prompt(3, 10);
    const auto r = router.route(turn(1, 3, 1, h));
    const WorkerId w = r.decision.chosen;
    router.publishSnapshot();
    QCOMPARE(gaugesOf(c, w).queued, 1);
    QCOMPARE(gaugesOf(c, w).running, 0);
    QVERIFY(router.observe(Admission{1, 3, w, AdmissionResult::Admitted, RoutePath::Seed, 240}, nullptr));
    QVERIFY(router.observe(SeedStarted{1, 3, 0, w, 240, false}, nullptr));
    router.blocksStored(w, 3, h, nullptr);
    router.blocksStored(w, 3, h, nullptr);  // told twice: counted once
    router.publishSnapshot();
    QCOMPARE(gaugesOf(c, w).queued, 0);
    QCOMPARE(gaugesOf(c, w).running, 1);
    QCOMPARE(gaugesOf(c, w).pending_seeds, 1);
    QCOMPARE(gaugesOf(c, w).kv_used, std::int64_t{10 * 24});
    QCOMPARE(gaugesOf(c, w).bindings, 1);
    QVERIFY(router.observe(TransferFinished{1, 0, w, 240, 1000, true, {}}, nullptr));
    QVERIFY(router.observe(RequestDone{1, 3, 1, w, RoutePath::Seed, RequestStatus::Ok, 100, 500, 240, 5, {}}, nullptr));
    router.publishSnapshot();
    QCOMPARE(gaugesOf(c, w).running, 0);
    QCOMPARE(gaugesOf(c, w).pending_seeds, 0);

    // A crash: not alive, its cache gone, and no longer a candidate.
    QVERIFY(router.observe(WorkerCrashed{w, "Scheduler hit an exception: AssertionError", 0}, nullptr));
    router.publishSnapshot();
    QVERIFY(!gaugesOf(c, w).alive);
    QCOMPARE(gaugesOf(c, w).kv_used, std::int64_t{0});
    const auto after = router.route(turn(2, 3, 2, prompt(3, 12)));
    QVERIFY(after.decision.chosen != w);
    QCOMPARE(after.path, RoutePath::Reseed);
  }

  void badObservationsChangeNothing_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("field");
    QTest::newRow("worker out of range") << 0 << "admission.worker: 3 is not a decode worker";
    QTest::newRow("prefill out of range") << 1 << "seed.prefill: 4 is not a prefill worker";
    QTest::newRow("KVScope's own kind") << 2 << "KVScope's own";
  }
  void badObservationsChangeNothing() {
    QFETCH(int, which);
    QFETCH(QString, field);
    Collect c;
    LiveRouter router(threeWorkers(), {&c});
    const std::size_t before = c.events.size();
    const EventPayload bad[] = {Admission{1, 1, 3, AdmissionResult::Admitted, RoutePath::Seed, 10},
                                SeedStarted{1, 1, 4, 0, 10, false}, KnobChanged{"K", 0, 200, "sneaky", {}}};
    std::string error;
    QVERIFY(!router.observe(bad[which], &error));
    QVERIFY2(QString::fromStdString(error).contains(field), error.c_str());
    QCOMPARE(c.events.size(), before);
    QVERIFY(!router.blocksStored(5, 1, prompt(1, 2), &error));
    QVERIFY(QString::fromStdString(error).contains("blocks_stored.worker"));
  }

  void knobAndPolicyChangesReachWatchersAndTheStream() {
    Collect c;
    LiveRouter router(threeWorkers(), {&c});
    std::vector<LiveRouter::KnobState> seen;
    const int id = router.watchKnobs([&](const LiveRouter::KnobState& s) { seen.push_back(s); });
    QCOMPARE(seen.size(), std::size_t{1});  // the state now
    QCOMPARE(seen[0].policy, std::string("kv-aware"));

    KnobRegistry::Result result;
    router.applyKnobs({{"K", 200}}, "console", [&](KnobRegistry::Result r) { result = std::move(r); });
    QVERIFY(result.ok);
    router.applyKnobs({{"K", -5}}, "console", [&](KnobRegistry::Result r) { result = std::move(r); });
    QVERIFY(!result.ok);  // out of range: refused, nobody told
    bool ok = false;
    router.setPolicy("exclusive-overlap", "console", [&](KnobRegistry::Result r) { ok = r.ok; });
    QVERIFY(ok);
    router.setPolicy("no-such-policy", "console", [&](KnobRegistry::Result r) { ok = r.ok; });
    QVERIFY(!ok);
    QCOMPARE(seen.size(), std::size_t{3});
    QCOMPARE(seen[1].who, std::string("console"));
    double k = -1;
    for (const auto& [name, value] : seen[1].knobs)
      if (name == "K") k = value;
    QCOMPARE(k, 200.0);
    QCOMPARE(seen[2].policy, std::string("exclusive-overlap"));
    QCOMPARE(c.all<KnobChanged>().size(), std::size_t{1});
    QCOMPARE(c.all<PolicyChanged>().size(), std::size_t{1});
    QCOMPARE(router.route(turn(1, 1, 1, prompt(1, 4))).decision.policy, std::string("exclusive-overlap"));

    router.unwatchKnobs(id);
    router.applyKnobs({{"K", 100}}, "console", [](KnobRegistry::Result) {});
    QCOMPARE(seen.size(), std::size_t{3});
    QVERIFY(!router.canPace());
    std::string error;
    QVERIFY(!router.seek(0, "x", &error));
  }

  // Inside a live cluster the router posts into the cluster's stream, which numbers the events and
  // owns RunStarted and the snapshots.
  void attachedToAClusterItPostsThroughIt() {
    std::vector<EventPayload> posted;
    LiveRouter router(threeWorkers(), [&](EventPayload p) {
      posted.push_back(std::move(p));
      return std::uint64_t{1000} + posted.size();
    });
    QVERIFY(posted.empty());  // no RunStarted of its own
    const auto r = router.route(turn(1, 1, 1, prompt(1, 4)));
    QCOMPARE(r.seq, std::uint64_t{1001});
    QVERIFY(std::holds_alternative<RouteDecision>(posted.back()));
    router.publishSnapshot();
    QCOMPARE(posted.size(), std::size_t{1});
    router.stop();
    QCOMPARE(posted.size(), std::size_t{1});  // nor a RunFinished
  }

  void aBadSpecIsRefusedWithTheField() {
    LiveClusterSpec spec = threeWorkers();
    spec.workers[1].name = "D0";
    QVERIFY_THROWS_EXCEPTION(InputError, LiveRouter(spec, std::vector<EventSink*>{}));
    spec = threeWorkers();
    spec.policy = "nope";
    QVERIFY_THROWS_EXCEPTION(InputError, LiveRouter(spec, std::vector<EventSink*>{}));
    spec = threeWorkers();
    spec.knobs["K"] = -1;
    QVERIFY_THROWS_EXCEPTION(InputError, LiveRouter(spec, std::vector<EventSink*>{}));
  }
};

QTEST_GUILESS_MAIN(LiveRouterTest)
#include "test_live_router.moc"
