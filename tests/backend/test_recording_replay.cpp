// A recording as a run (RecordingReplay, behind `serve --replay`): playing to the end publishes
// every recorded event in order under fresh sequence numbers; a seek restates the run as it stood
// at the target (knobs, policy and gauges from before it) and carries on from there; pause stops
// progress; knob changes and seeks outside the recording are refused; a damaged tail is served as
// far as it reads.
#include <QtTest>

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <mutex>

#include <nlohmann/json.hpp>

#include "backend/recording/EventRecorder.h"
#include "backend/recording/RecordingReplay.h"
#include "backend/service/TelemetryHub.h"
#include "core/events/EventJson.h"
#include "core/model/Error.h"
#include "core/run/WorkloadFactory.h"
#include "core/sim/ClusterSimulator.h"

using namespace kvscope;

namespace {

constexpr double kRunSeconds = 600;
const SimTime kKnobAt = secondsToTime(80);     // K 200 -> 0
const SimTime kPolicyAt = secondsToTime(150);  // kv-aware -> round-robin
constexpr int kWaitMs = 120000;                // generous: the machine may be busy

struct Collector : EventSink {
  mutable std::mutex mutex;
  std::vector<Event> events;
  void onEvent(const Event& e) override {
    std::lock_guard lock(mutex);
    events.push_back(e);
  }
  std::vector<Event> copy() const {
    std::lock_guard lock(mutex);
    return events;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex);
    return events.size();
  }
};

// An event as JSON without its sequence number (a replay numbers its own stream).
std::string content(const Event& e) {
  auto j = eventToJson(e);
  j.erase("seq");
  return j.dump();
}

// The recorded events from `from` on, as a replay publishes them: recorded RunStarted frames aside
// (the replay states the run from the header instead).
std::vector<std::string> recordedFrom(const std::vector<Event>& recorded, SimTime from) {
  std::vector<std::string> out;
  for (const auto& e : recorded)
    if (e.time >= from && !std::holds_alternative<RunStarted>(e.payload)) out.push_back(content(e));
  return out;
}

std::optional<Event> lastSnapshotBefore(const std::vector<Event>& recorded, SimTime t) {
  std::optional<Event> out;
  for (const auto& e : recorded)
    if (e.time < t && std::holds_alternative<Snapshot>(e.payload)) out = e;
  return out;
}

double knob(const RunStarted& run, const std::string& name) {
  for (const auto& [n, v] : run.knobs)
    if (n == name) return v;
  return -1;
}

}  // namespace

class TestRecordingReplay : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string path_;
  std::vector<Event> recorded_;  // everything the simulation published, in order

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    path_ = dir_.filePath("run.kvrec").toStdString();
    Scenario s = Scenario::load("e3-load-floor");
    s.duration_s = kRunSeconds;
    EventRecorder recorder(path_, 10.0);
    Collector all;
    ClusterSimulator sim(s, buildWorkload(s, s.seed), s.seed);
    sim.addSink(&recorder);
    sim.addSink(&all);
    sim.start();
    sim.runUntil(kKnobAt);
    QVERIFY(sim.applyKnobs({{"K", 0}}, "tester").ok);
    sim.runUntil(kPolicyAt);
    QVERIFY(sim.setPolicy("round-robin", "tester"));
    sim.run();
    sim.finish(true);
    std::string error;
    QVERIFY2(recorder.close(&error), error.c_str());
    recorded_ = all.copy();
    QVERIFY2(recorded_.size() > 3000, qPrintable(QString::number(recorded_.size())));
    QCOMPARE(knob(std::get<RunStarted>(recorded_.front().payload), "K"), 200.0);
    QCOMPARE(std::get<RunStarted>(recorded_.front().payload).policy, std::string("kv-aware"));
  }

  void playingToTheEndPublishesEveryRecordedEventInOrder() {
    Collector published;
    RecordingReplay replay(path_, {&published});
    QVERIFY(replay.damage().problems.empty());
    QCOMPARE(replay.endTime(), recorded_.back().time);
    replay.start(0);  // as fast as possible
    QTRY_VERIFY_WITH_TIMEOUT(replay.atEnd(), kWaitMs);
    QCOMPARE(replay.simTime(), replay.endTime());
    const auto events = published.copy();
    QCOMPARE(events.size(), recorded_.size());  // RunStarted once (from the header), then the rest
    for (std::size_t i = 0; i < events.size(); ++i) {
      QCOMPARE(events[i].seq, std::uint64_t{i});
      if (content(events[i]) != content(recorded_[i]))
        QFAIL(qPrintable(
            QString("event %1 differs:\n%2\n%3")
                .arg(i)
                .arg(QString::fromStdString(content(events[i])), QString::fromStdString(content(recorded_[i])))));
    }
  }

  void seekBackAndForthRestatesTheRunAtTheTarget() {
    TelemetryHub hub;
    Collector published;
    RecordingReplay replay(path_, {&hub, &published});
    replay.start(0);
    QTRY_VERIFY_WITH_TIMEOUT(replay.atEnd(), kWaitMs);
    QVERIFY(hub.state().finished);
    replay.pause("tester");  // seeks while paused publish the restatement and nothing after it

    struct Target {
      SimTime time;
      double k;
      const char* policy;
    };
    // Back before the policy change, forward after it, back before the knob change.
    for (const Target& t : {Target{secondsToTime(120), 0, "kv-aware"}, Target{secondsToTime(200), 0, "round-robin"},
                            Target{secondsToTime(45.5), 200, "kv-aware"}}) {
      const std::size_t before = published.size();
      std::string error;
      QVERIFY2(replay.seek(t.time, "scrubber", &error), error.c_str());
      QCOMPARE(replay.simTime(), t.time);
      const auto events = published.copy();
      // RunStarted as the run began, every recorded event before the target (a client rebuilds its
      // view from them: nothing before a seek is dropped), then the seek; nothing runs while paused.
      const auto& run = std::get<RunStarted>(events[before].payload);
      QCOMPARE(knob(run, "K"), 200.0);
      QCOMPARE(run.policy, std::string("kv-aware"));
      QCOMPARE(run.scenario, std::string("e3-load-floor"));
      std::vector<std::string> history, expected_history;
      for (std::size_t i = before + 1; i + 1 < events.size(); ++i) history.push_back(content(events[i]));
      for (const Event& e : recorded_)
        if (e.time < t.time && !std::holds_alternative<RunStarted>(e.payload)) expected_history.push_back(content(e));
      QCOMPARE(history.size(), expected_history.size());
      QVERIFY(history == expected_history);
      const auto snapshot = lastSnapshotBefore(recorded_, t.time);
      QVERIFY(snapshot.has_value());
      const auto& seek = std::get<RunControlChanged>(events.back().payload);
      QCOMPARE(seek.action, RunAction::Seek);
      QCOMPARE(seek.target, t.time);
      QCOMPARE(seek.who, std::string("scrubber"));
      QCOMPARE(events.back().time, t.time);

      const HubState state = hub.state();  // what GetState reports
      QCOMPARE(state.run_seq, events[before].seq);
      QCOMPARE(state.knobs.at("K"), t.k);
      QCOMPARE(state.policy, std::string(t.policy));
      QVERIFY(state.has_snapshot);
      QCOMPARE(content(Event{0, snapshot->time, state.snapshot}), content(*snapshot));
      QVERIFY(!state.finished);  // the run goes on from the target
    }

    // From the last target on, the stream is the recording again.
    const std::size_t resumed_at = published.size();
    replay.resume("tester");
    QTRY_VERIFY_WITH_TIMEOUT(replay.atEnd(), kWaitMs);
    const auto events = published.copy();
    std::vector<std::string> after;
    for (std::size_t i = resumed_at + 1; i < events.size(); ++i) after.push_back(content(events[i]));  // +1: Resumed
    QCOMPARE(std::get<RunControlChanged>(events[resumed_at].payload).action, RunAction::Resumed);
    const auto expected = recordedFrom(recorded_, secondsToTime(45.5));
    QCOMPARE(after.size(), expected.size());
    QVERIFY(after == expected);
    // One stream: sequence numbers never go back, whatever the recorded times do.
    for (std::size_t i = 0; i < events.size(); ++i) QCOMPARE(events[i].seq, std::uint64_t{i});
    QVERIFY(hub.state().finished);
  }

  void pauseStopsProgress() {
    Collector published;
    RecordingReplay replay(path_, {&published});
    replay.start(1);  // real time: 600 s of recording, far longer than this test
    QTRY_VERIFY_WITH_TIMEOUT(published.size() > 10, kWaitMs);
    replay.pause("tester");
    QVERIFY(replay.paused());
    const std::size_t n = published.size();
    const SimTime t = replay.simTime();
    QVERIFY(t < secondsToTime(kRunSeconds / 2));  // paced, not as fast as possible
    const auto events = published.copy();
    const auto& paused = std::get<RunControlChanged>(events.back().payload);
    QCOMPARE(paused.action, RunAction::Paused);
    QCOMPARE(paused.who, std::string("tester"));
    QCOMPARE(paused.speed, 1.0);
    QTest::qWait(300);
    QCOMPARE(published.size(), n);  // nothing is published while paused
    QCOMPARE(replay.simTime(), t);
    replay.pause("tester");  // already paused: no second event
    QCOMPARE(published.size(), n);
    replay.setSpeed(0, "tester");  // then as fast as possible
    replay.resume("tester");
    QTRY_VERIFY_WITH_TIMEOUT(replay.atEnd(), kWaitMs);
    QVERIFY(!replay.paused());
    QCOMPARE(replay.simTime(), replay.endTime());
  }

  void knobChangesAndSeeksOutsideTheRecordingAreRefused() {
    RecordingReplay replay(path_, {});
    QVERIFY(replay.canSeek());
    QVERIFY(!replay.canChangeKnobs());
    std::optional<KnobRegistry::Result> knobs;
    replay.applyKnobs({{"K", 0}}, "tester", [&](KnobRegistry::Result r) { knobs = std::move(r); });
    QVERIFY(knobs && !knobs->ok && knobs->changes.empty());
    QVERIFY2(knobs->error.find("recording") != std::string::npos, knobs->error.c_str());
    std::optional<KnobRegistry::Result> policy;
    replay.setPolicy("linear", "tester", [&](KnobRegistry::Result r) { policy = std::move(r); });
    QVERIFY(policy && !policy->ok);
    QVERIFY2(policy->error.find("recording") != std::string::npos, policy->error.c_str());
    for (const SimTime outside : {SimTime{-1}, replay.endTime() + 1}) {
      std::string error;
      QVERIFY(!replay.seek(outside, "tester", &error));
      QVERIFY2(error.find("outside the recording [0, " + std::to_string(replay.endTime()) + "]") != std::string::npos,
               error.c_str());
    }
  }

  void damagedTailIsServedAsFarAsItReads() {
    const QString cut = dir_.filePath("cut.kvrec");
    QFile::remove(cut);
    QVERIFY(QFile::copy(QString::fromStdString(path_), cut));
    QVERIFY(QFile::resize(cut, QFileInfo(cut).size() * 6 / 10 + 7));  // mid-frame, and without the index
    Collector published;
    RecordingReplay replay(cut.toStdString(), {&published});
    QVERIFY(replay.damage().truncated);
    QVERIFY(!replay.damage().problems.empty());
    QVERIFY2(replay.damage().problems.front().find("cut.kvrec") != std::string::npos,
             replay.damage().problems.front().c_str());
    QVERIFY(replay.endTime() < recorded_.back().time);
    replay.start(0);
    QTRY_VERIFY_WITH_TIMEOUT(replay.atEnd(), kWaitMs);
    const auto events = published.copy();
    QVERIFY(events.size() > 1000);
    QVERIFY(events.size() < recorded_.size());
    for (std::size_t i = 0; i < events.size(); ++i)  // the readable part, exactly
      if (content(events[i]) != content(recorded_[i])) QFAIL(qPrintable(QString("event %1 differs").arg(i)));
  }

  void notARecordingIsAClearError() {
    const QString notes = dir_.filePath("notes.kvrec");
    QFile f(notes);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is a text file, not a recording\n");
    f.close();
    try {
      RecordingReplay replay(notes.toStdString(), {});
      QFAIL("opened a text file as a recording");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("notes.kvrec"), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestRecordingReplay)
#include "test_recording_replay.moc"
