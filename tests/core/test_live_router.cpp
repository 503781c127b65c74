// The router core driving a real cluster (LiveRouter): the simulator's path rule on reported state,
// the loads the policies read follow what the cluster reports, bad observations change nothing,
// and knob and policy changes reach watchers and the event stream.
#include <QtTest>

#include "core/model/Error.h"
#include "core/run/LiveRouter.h"

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
    QVERIFY(
        router.observe(RequestDone{1, 7, 1, w, RoutePath::Seed, RequestStatus::Ok, 1000, 5000, 960, 10, {}}, nullptr));

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

  // A client routed 3,000 requests to D0 and crashed without reporting: while they count as load,
  // a load-aware policy sends D0 nothing; once they expire D0 takes its share again.
  void unreportedRequestsExpire() {
    for (const double expiry : {1800.0, 1.0}) {
      LiveClusterSpec spec = threeWorkers();
      spec.policy = "lmetric";
      spec.knobs["unreported_expiry_s"] = expiry;
      Collect c;
      LiveRouter router(spec, {&c});
      for (RequestId id = 1; id <= 3000; ++id) {
        LiveRouter::RouteInput in = turn(id, 100000 + id, 1, prompt(static_cast<SessionId>(id), 8));
        in.candidates = {0};
        QCOMPARE(router.route(in).decision.chosen, WorkerId{0});
      }
      if (expiry < 10) QTest::qWait(1200);
      int to_d0 = 0;
      for (RequestId id = 5001; id <= 5300; ++id) {
        const auto r = router.route(turn(id, id, 1, prompt(static_cast<SessionId>(id), 8)));
        to_d0 += r.decision.chosen == 0;
        QVERIFY(router.observe(
            RequestDone{id, id, 1, r.decision.chosen, r.path, RequestStatus::Ok, 1000, 2000, 192, 10, {}}, nullptr));
      }
      router.publishSnapshot();
      if (expiry > 10) {
        QCOMPARE(to_d0, 0);  // the ghosts still hold D0
        QCOMPARE(gaugesOf(c, 0).queued, 3000);
        QCOMPARE(gaugesOf(c, 0).expired_unreported, std::int64_t{0});
        QCOMPARE(gaugesOf(c, 0).awaiting_report, std::int64_t{3000});  // the snapshot says whose load it is
      } else {
        QVERIFY2(to_d0 >= 60, qPrintable(QString::number(to_d0)));  // about a third of 300
        QCOMPARE(gaugesOf(c, 0).queued, 0);
        QCOMPARE(gaugesOf(c, 0).expired_unreported, std::int64_t{3000});
        QCOMPARE(gaugesOf(c, 0).awaiting_report, std::int64_t{0});
      }
    }
  }

  // A retried Route with the same id replaces its earlier routing: 100 routes of id 42 and one
  // report leave no load behind.
  void aRepeatedIdReplacesItsRouting() {
    Collect c;
    LiveRouter router(threeWorkers(), {&c});
    WorkerId last = kNoWorker;
    for (int i = 0; i < 100; ++i) last = router.route(turn(42, 7, 1, prompt(7, 10))).decision.chosen;
    router.publishSnapshot();
    int queued = 0;
    for (WorkerId w = 0; w < 3; ++w) queued += gaugesOf(c, w).queued;
    QCOMPARE(queued, 1);
    QVERIFY(router.observe(RequestDone{42, 7, 1, last, RoutePath::Seed, RequestStatus::Ok, 1000, 2000, 240, 10, {}},
                           nullptr));
    router.publishSnapshot();
    for (WorkerId w = 0; w < 3; ++w) QCOMPARE(gaugesOf(c, w).queued, 0);
  }

  // The caps: at most max_tracked_per_worker per worker and max_tracked_requests overall, the
  // oldest forgotten first, each one counted.
  void trackingIsCapped() {
    LiveClusterSpec spec = threeWorkers();
    spec.knobs["max_tracked_requests"] = 1000;
    spec.knobs["max_tracked_per_worker"] = 600;
    Collect c;
    LiveRouter router(spec, {&c});
    for (RequestId id = 1; id <= 5000; ++id) {
      LiveRouter::RouteInput in = turn(id, id, 1, prompt(static_cast<SessionId>(id), 4));
      in.candidates = {static_cast<WorkerId>(id % 2)};  // D0 and D1 only
      router.route(in);
    }
    router.publishSnapshot();
    const WorkerGauges d0 = gaugesOf(c, 0), d1 = gaugesOf(c, 1);
    QVERIFY2(d0.queued <= 600 && d1.queued <= 600, qPrintable(QString("%1 %2").arg(d0.queued).arg(d1.queued)));
    QCOMPARE(d0.queued + d1.queued, 1000);
    QCOMPARE(d0.expired_unreported + d1.expired_unreported, std::int64_t{4000});
    // The oldest went: the newest request is still tracked, so its report frees its slot.
    QVERIFY(router.observe(RequestDone{5000, 5000, 1, 0, RoutePath::Seed, RequestStatus::Ok, 1000, 2000, 96, 10, {}},
                           nullptr));
    router.publishSnapshot();
    QCOMPARE(gaugesOf(c, 0).queued + gaugesOf(c, 1).queued, 999);
  }

  // Sessions not routed for session_idle_s are forgotten: their bindings go.
  void idleSessionsAreForgotten() {
    LiveClusterSpec spec = threeWorkers();
    spec.knobs["session_idle_s"] = 1;
    Collect c;
    LiveRouter router(spec, {&c});
    for (RequestId id = 1; id <= 30; ++id) {
      const auto r = router.route(turn(id, id, 1, prompt(static_cast<SessionId>(id), 4)));
      QVERIFY(router.observe(Admission{id, id, r.decision.chosen, AdmissionResult::Admitted, r.path, 96}, nullptr));
      QVERIFY(router.observe(
          RequestDone{id, id, 1, r.decision.chosen, r.path, RequestStatus::Ok, 1000, 2000, 96, 10, {}}, nullptr));
    }
    router.publishSnapshot();
    int bound = 0;
    for (WorkerId w = 0; w < 3; ++w) bound += gaugesOf(c, w).bindings;
    QCOMPARE(bound, 30);
    QTest::qWait(1700);  // past the idle time and the next sweep (every half idle time)
    router.publishSnapshot();
    for (WorkerId w = 0; w < 3; ++w) QCOMPARE(gaugesOf(c, w).bindings, 0);
  }

  // Knob watchers are capped, and told outside the router's lock: a watcher may even route (with
  // the notification under the lock that would deadlock; a slow one would stall every Route).
  void knobWatchersAreCappedAndToldOutsideTheLock() {
    LiveRouter router(threeWorkers(), std::vector<EventSink*>{});
    std::vector<int> ids;
    for (std::size_t i = 0; i < LiveRouter::kMaxKnobWatchers; ++i)
      ids.push_back(router.watchKnobs([](const LiveRouter::KnobState&) {}));
    QVERIFY(std::all_of(ids.begin(), ids.end(), [](int id) { return id >= 0; }));
    QCOMPARE(router.watchKnobs([](const LiveRouter::KnobState&) {}), -1);
    router.unwatchKnobs(ids.back());
    int routed_inside = 0;
    const int id = router.watchKnobs([&](const LiveRouter::KnobState& s) {
      if (s.who != "test") return;
      router.route(turn(900 + routed_inside, 9, 1, prompt(9, 4)));
      ++routed_inside;
    });
    QVERIFY(id >= 0);
    bool done = false;
    router.applyKnobs({{"K", 50}}, ChangeAuthor{"test", {}}, [&](const KnobRegistry::Result& r) { done = r.ok; });
    QVERIFY(done);
    QCOMPARE(routed_inside, 1);
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
