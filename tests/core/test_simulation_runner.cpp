// The simulation thread: pause/step/resume from another thread, knob changes applied between
// events, pause/resume/speed as events with their author, and an unpaced run equal to a direct one.
#include <QtTest>

#include <atomic>
#include <mutex>

#include <nlohmann/json.hpp>

#include "core/events/EventJson.h"
#include "core/metrics/SummaryCollector.h"
#include "core/run/SimulationRunner.h"
#include "core/run/WorkloadFactory.h"

using namespace kvscope;

namespace {
struct CountingSink : EventSink {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::atomic<long> count{0};
  SummaryCollector summary;
  void onEvent(const Event& e) override {
    std::lock_guard lock(mutex);
    lines.push_back(eventToJson(e).dump());
    summary.onEvent(e);
    ++count;
  }
};

Scenario shortScenario(double seconds) {
  Scenario s = Scenario::load("e3-load-floor");
  s.duration_s = seconds;
  return s;
}
}  // namespace

class TestSimulationRunner : public QObject {
  Q_OBJECT
 private slots:
  void unpacedRunMatchesDirectRun() {
    const Scenario s = shortScenario(600);
    CountingSink threaded, direct;
    {
      SimulationRunner runner(s, buildWorkload(s, s.seed), {&threaded});
      runner.start(0);
      runner.waitFinished();
      QVERIFY(runner.finished());
    }
    ClusterSimulator sim(s, buildWorkload(s, s.seed), s.seed);
    sim.addSink(&direct);
    sim.start();
    sim.run();
    sim.finish(true);
    QCOMPARE(threaded.lines.size(), direct.lines.size());
    QVERIFY(threaded.lines == direct.lines);
  }

  void pauseStepResume() {
    const Scenario s = shortScenario(3600);
    CountingSink sink;
    SimulationRunner runner(s, buildWorkload(s, s.seed), {&sink});
    runner.start(1000);  // paced: 1000x real time
    QTRY_VERIFY_WITH_TIMEOUT(runner.simTime() > 0, 5000);
    runner.pause("test");
    QVERIFY(runner.paused());
    const long events = sink.count.load();
    const SimTime t = runner.simTime();
    QTest::qWait(100);
    QCOMPARE(sink.count.load(), events);  // nothing runs while paused
    QCOMPARE(runner.simTime(), t);
    // One step is one simulator event; not every one publishes telemetry, so step until one does.
    SimTime last = runner.simTime();
    int steps = 0;
    while (sink.count.load() == events && steps < 10000) {
      runner.step();
      QVERIFY(runner.simTime() >= last);
      last = runner.simTime();
      ++steps;
    }
    QVERIFY(sink.count.load() > events);
    QVERIFY(runner.paused());
    runner.resume("test");
    QTRY_VERIFY_WITH_TIMEOUT(runner.simTime() > t, 5000);
    runner.stop();
    runner.waitFinished();
    std::lock_guard lock(sink.mutex);
    QVERIFY(sink.lines.back().find("\"run_finished\"") != std::string::npos);
    QVERIFY(sink.lines.back().find("\"completed\":false") != std::string::npos);
  }

  void pauseResumeAndSpeedAreEventsThatChangeNothingElse() {
    const Scenario s = shortScenario(600);
    CountingSink steered, direct;
    SimulationRunner runner(s, buildWorkload(s, s.seed), {&steered});
    runner.start(1000);
    QTRY_VERIFY_WITH_TIMEOUT(runner.simTime() > secondsToTime(5), 5000);
    runner.pause("alice");
    runner.pause("alice");      // already paused: changes nothing, so no event
    runner.setSpeed(0, "bob");  // the rest as fast as possible
    runner.setSpeed(0, "bob");
    runner.resume("carol");
    runner.resume("carol");
    runner.waitFinished();
    ClusterSimulator sim(s, buildWorkload(s, s.seed), s.seed);
    sim.addSink(&direct);
    sim.start();
    sim.run();
    sim.finish(true);

    std::lock_guard lock(steered.mutex);
    std::vector<nlohmann::json> controls;
    std::vector<std::string> others;
    std::uint64_t expected_seq = 0;
    for (const auto& line : steered.lines) {
      auto j = nlohmann::json::parse(line);
      QCOMPARE(j["seq"].get<std::uint64_t>(), expected_seq++);
      j.erase("seq");  // the control events take sequence numbers of the same stream
      if (j["kind"] == "run_control")
        controls.push_back(j);
      else
        others.push_back(j.dump());
    }
    QCOMPARE(controls.size(), std::size_t{3});
    QCOMPARE(controls[0]["action"], "paused");
    QCOMPARE(controls[0]["who"], "alice");
    QCOMPARE(controls[0]["speed"], 1000.0);
    QVERIFY(controls[0]["t_us"].get<SimTime>() >= secondsToTime(5));
    QCOMPARE(controls[1]["action"], "speed");
    QCOMPARE(controls[1]["who"], "bob");
    QCOMPARE(controls[1]["speed"], 0.0);
    QCOMPARE(controls[2]["action"], "resumed");
    QCOMPARE(controls[2]["who"], "carol");
    // Everything else is exactly the undisturbed run, and so is its summary.
    std::vector<std::string> undisturbed;
    for (const auto& line : direct.lines) {
      auto j = nlohmann::json::parse(line);
      j.erase("seq");
      undisturbed.push_back(j.dump());
    }
    QCOMPARE(others.size(), undisturbed.size());
    QVERIFY(others == undisturbed);
    QCOMPARE(QString::fromStdString(steered.summary.summary().toJson().dump()),
             QString::fromStdString(direct.summary.summary().toJson().dump()));
  }

  void knobChangesApplyBetweenEventsAndAreRecorded() {
    const Scenario s = shortScenario(600);
    CountingSink sink;
    SimulationRunner runner(s, buildWorkload(s, s.seed), {&sink});
    runner.start(1000);
    QTRY_VERIFY_WITH_TIMEOUT(runner.simTime() > secondsToTime(5), 5000);
    auto bad = runner.applyKnobs({{"K", 50}, {"rho", 7}}, "test");
    QVERIFY(!bad.get().ok);  // all-or-nothing: K stays 200
    auto good = runner.applyKnobs({{"K", 0}}, "console");
    const auto result = good.get();
    QVERIFY(result.ok);
    QCOMPARE(result.changes.size(), std::size_t{1});
    QVERIFY(runner.setPolicy("exclusive-overlap", "console").get());
    QVERIFY(!runner.setPolicy("no-such-policy", "console").get());
    runner.waitFinished();
    std::lock_guard lock(sink.mutex);
    long knob_events = 0, policy_events = 0, exclusive_routes = 0;
    bool k50 = false, k200_at_start = false;
    for (const auto& l : sink.lines) {
      knob_events += l.find("\"kind\":\"knob\"") != std::string::npos;
      k50 |= l.find("\"kind\":\"knob\"") != std::string::npos && l.find("\"new\":50") != std::string::npos;
      k200_at_start |=
          l.find("\"kind\":\"run_started\"") != std::string::npos && l.find("\"K\":200") != std::string::npos;
      policy_events += l.find("\"kind\":\"policy\"") != std::string::npos;
      exclusive_routes += l.find("\"kind\":\"route\"") != std::string::npos &&
                          l.find("\"policy\":\"exclusive-overlap\"") != std::string::npos;
    }
    QCOMPARE(knob_events, 1L);  // K=0 from the console (the scenario's K=200 is in run_started)
    QVERIFY(!k50);
    QVERIFY(k200_at_start);
    QCOMPARE(policy_events, 1L);
    QVERIFY(exclusive_routes > 0);  // the next decisions use the new policy
  }
};

QTEST_GUILESS_MAIN(TestSimulationRunner)
#include "test_simulation_runner.moc"
