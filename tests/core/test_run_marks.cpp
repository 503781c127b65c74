// Live sweeps' run markers: RunMarkBook checks and numbers them (a start while a run is open ends it
// first; an end names the open run or none), a live run control puts them into its stream (and ends
// a run still open when the session stops), and MarkedRunSplitter turns a session stream into one
// self-contained stream and summary per marked run.
#include <QtTest>

#include "core/run/LiveRouter.h"
#include "core/run/MarkedRunSplitter.h"
#include "core/run/RunMarkBook.h"
#include "tests/support/LockedEventLog.h"

using namespace kvscope;
using kvscope::test::LockedEventLog;

namespace {

RunMarkRequest start(std::string name, std::vector<std::pair<std::string, std::string>> params = {}) {
  return {RunMarkAction::Start, std::move(name), std::move(params), "script", {}};
}
RunMarkRequest end(std::string name = {}) { return {RunMarkAction::End, std::move(name), {}, "script", {}}; }

RequestDone done(RequestId id, WorkerId w, bool ok = true) {
  return {id,
          id,
          1,
          w,
          RoutePath::Direct,
          ok ? RequestStatus::Ok : RequestStatus::Failed,
          ok ? 10'000 : -1,
          50'000,
          1000,
          100,
          ok ? "" : "KVTransferError"};
}

RunStarted session() {
  RunStarted r;
  r.scenario = "live: lab";
  r.policy = "kv-aware";
  r.workers = {{"D0", WorkerRole::Decode, 1000}, {"D1", WorkerRole::Decode, 1000}};
  r.knobs = {{"K", 0}, {"rho", 0.95}};
  return r;
}

Snapshot gauges(std::int64_t used) {
  return {{{0, used, 1000, used, 1, 0, 1, 1, 0, true}, {1, used / 2, 1000, used / 2, 0, 0, 0, 0, 0, true}}, {}};
}

RunMarked marker(RunMarkAction a, std::uint32_t index, std::string name,
                 std::vector<std::pair<std::string, std::string>> params = {}, std::string who = "script") {
  return {a, index, std::move(name), std::move(params), std::move(who), {}};
}

struct SplitRecorder {
  std::vector<std::unique_ptr<LockedEventLog>> streams;
  std::vector<MarkedRun> runs;
  MarkedRunSplitter splitter{{[this](const RunMarked&) -> EventSink* {
                                streams.push_back(std::make_unique<LockedEventLog>());
                                return streams.back().get();
                              },
                              [this](const MarkedRun& r) { runs.push_back(r); }}};
  std::uint64_t seq = 0;
  void feed(SimTime t, EventPayload p) { splitter.onEvent(Event{seq++, t, std::move(p)}); }
};

}  // namespace

class RunMarksTest : public QObject {
  Q_OBJECT
 private slots:
  void badMarkersNameTheirField_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    QTest::newRow("start without name") << 0 << "name: a run's start needs a name";
    QTest::newRow("long name") << 1 << "name: 129 bytes, at most 128";
    QTest::newRow("control char") << 2 << "name: contains control characters";
    QTest::newRow("empty parameter name") << 3 << "parameters[1].name: empty";
    QTest::newRow("odd parameter name") << 4 << "parameters[0].name: 'K 2' (letters, digits";
    QTest::newRow("parameter twice") << 5 << "parameters[1].name: 'K' given twice";
    QTest::newRow("too many") << 6 << "parameters: 33 entries, at most 32";
    QTest::newRow("end with parameters") << 7 << "parameters: only a run's start carries parameters";
    QTest::newRow("newline in value") << 8 << "parameters[0].value: contains control characters";
  }
  void badMarkersNameTheirField() {
    QFETCH(int, which);
    QFETCH(QString, expected);
    std::vector<RunMarkRequest> cases = {start(""),
                                         start(std::string(129, 'n')),
                                         start("a\tb"),
                                         start("r", {{"K", "1"}, {"", "2"}}),
                                         start("r", {{"K 2", "1"}}),
                                         start("r", {{"K", "1"}, {"K", "2"}}),
                                         start("r"),
                                         end(),
                                         start("r", {{"flags", "a\nb"}})};
    for (int i = 0; i < 33; ++i) cases[6].parameters.emplace_back("p" + std::to_string(i), "1");
    cases[7].parameters = {{"K", "1"}};
    RunMarkBook book;
    const RunMarkResult r = book.mark(cases[static_cast<std::size_t>(which)]);
    QVERIFY(r.marks.empty());
    QVERIFY(!r.preconditionFailed);
    QVERIFY2(QString::fromStdString(r.error).startsWith(expected), r.error.c_str());
    QVERIFY(!book.open());
    // A refused marker uses no index: the next good one is run 1.
    QCOMPARE(book.mark(start("ok")).marks.at(0).index, 1u);
  }

  void runsAreNumberedAndAStartEndsTheOpenRun() {
    RunMarkBook book;
    auto none = book.mark(end());
    QVERIFY(none.preconditionFailed);
    QCOMPARE(QString::fromStdString(none.error), QString("no run is open"));

    auto a = book.mark(start("k200", {{"K", "200"}, {"seed", "1"}}));
    QVERIFY(a.error.empty());
    QCOMPARE(a.marks.size(), 1u);
    QCOMPARE(a.marks[0].index, 1u);
    QCOMPARE(a.marks[0].parameters.size(), 2u);

    // The script died mid-run and started the next one: run 1 ends first, then run 2 starts.
    auto b = book.mark(start("k400", {{"K", "400"}}));
    QCOMPARE(b.marks.size(), 2u);
    QCOMPARE(b.marks[0].action, RunMarkAction::End);
    QCOMPARE(b.marks[0].index, 1u);
    QCOMPARE(b.marks[0].name, std::string("k200"));
    QCOMPARE(b.marks[0].parameters, a.marks[0].parameters);  // an end repeats its start
    QCOMPARE(b.marks[1].index, 2u);

    auto wrong = book.mark(end("k200"));
    QVERIFY(wrong.preconditionFailed);
    QCOMPARE(QString::fromStdString(wrong.error), QString("run 'k400' is open, not 'k200'"));
    QCOMPARE(book.open()->name, std::string("k400"));

    auto c = book.mark(end("k400"));
    QCOMPARE(c.marks.size(), 1u);
    QCOMPARE(c.marks[0].action, RunMarkAction::End);
    QVERIFY(!book.open());
    QVERIFY(!book.closeOpen("session end"));
    book.mark(start("k800"));
    auto last = book.closeOpen("session end");
    QVERIFY(last);
    QCOMPARE(last->index, 3u);
    QCOMPARE(last->who, std::string("session end"));
  }

  void aLiveRouterPutsMarkersIntoItsStreamAndEndsAnOpenRunAtStop() {
    LockedEventLog events;
    LiveClusterSpec spec;
    spec.workers = {{"D0", WorkerRole::Decode, 100'000}, {"D1", WorkerRole::Decode, 100'000}};
    auto router = std::make_unique<LiveRouter>(spec, std::vector<EventSink*>{&events});
    QVERIFY(router->canMarkRuns());
    RunMarkResult got;
    router->markRun(start("k200", {{"K", "200"}}), [&](RunMarkResult r) { got = std::move(r); });
    QVERIFY(got.error.empty());
    router->stop();
    const auto marks = events.of<RunMarked>();
    QCOMPARE(marks.size(), 2u);
    QCOMPARE(marks[0].action, RunMarkAction::Start);
    QCOMPARE(marks[1].action, RunMarkAction::End);
    QCOMPARE(marks[1].who, std::string("session end"));
    // The end comes before RunFinished, so every reader sees the run closed inside the session.
    std::lock_guard lock(events.mutex);
    QVERIFY(std::holds_alternative<RunFinished>(events.events.back().payload));
    QVERIFY(std::holds_alternative<RunMarked>(events.events[events.events.size() - 2].payload));
  }

  void theSplitterMakesOneSelfContainedStreamPerRun() {
    SplitRecorder s;
    s.feed(0, session());
    s.feed(1'000'000, gauges(100));
    s.feed(1'500'000, done(1, 0));  // before any run: in no run's stream
    s.feed(2'000'000, KnobChanged{"K", 0, 200, "console", {}});
    s.feed(2'100'000, gauges(300));
    s.feed(3'000'000, marker(RunMarkAction::Start, 1, "k200", {{"K", "200"}}));
    s.feed(3'500'000, done(2, 0));
    s.feed(4'000'000, done(3, 1, false));
    s.feed(4'200'000, gauges(500));
    s.feed(5'000'000, marker(RunMarkAction::End, 1, "k200", {{"K", "200"}}));
    s.feed(5'500'000, done(4, 1));  // between runs
    s.feed(6'000'000, PolicyChanged{"kv-aware", "linear", "console", {}});
    s.feed(7'000'000, marker(RunMarkAction::Start, 2, "linear"));
    s.feed(8'000'000, done(5, 1));
    s.feed(9'000'000, RunFinished{false});  // the session stops with run 2 open

    QCOMPARE(s.runs.size(), 2u);
    QCOMPARE(s.streams.size(), 2u);
    const MarkedRun& r1 = s.runs[0];
    QCOMPARE(r1.start.name, std::string("k200"));
    QCOMPARE(r1.session_start, SimTime{3'000'000});
    QCOMPARE(r1.session_end, SimTime{5'000'000});
    QCOMPARE(r1.summary.scenario, std::string("k200"));
    QCOMPARE(r1.summary.total, 2L);
    QCOMPARE(r1.summary.failed, 1L);
    QCOMPARE(r1.summary.sim_seconds, 2.0);

    // Run 1's own stream: RunStarted with the knobs in effect, the newest gauges, the marker, its
    // two requests re-timed from its start, its gauges, the end marker, RunFinished.
    const auto& e1 = s.streams[0]->events;
    QCOMPARE(e1.size(), 8u);
    for (std::size_t i = 0; i < e1.size(); ++i) QCOMPARE(e1[i].seq, i);
    const auto& header = std::get<RunStarted>(e1[0].payload);
    QCOMPARE(header.scenario, std::string("k200"));
    QCOMPARE(header.knobs.at(0), (std::pair<std::string, double>{"K", 200}));
    QCOMPARE(header.workers.size(), 2u);
    QCOMPARE(std::get<Snapshot>(e1[1].payload).workers[0].kv_used, 300);
    QCOMPARE(std::get<RunMarked>(e1[2].payload).action, RunMarkAction::Start);
    QCOMPARE(e1[3].time, SimTime{500'000});
    QCOMPARE(std::get<RequestDone>(e1[3].payload).request, RequestId{2});
    QCOMPARE(std::get<RequestDone>(e1[4].payload).request, RequestId{3});
    QCOMPARE(std::get<RunMarked>(e1[6].payload).action, RunMarkAction::End);
    QVERIFY(std::get<RunFinished>(e1[7].payload).completed);

    // Run 2 starts under the policy changed between runs and ends with the session, incomplete.
    const MarkedRun& r2 = s.runs[1];
    QCOMPARE(r2.summary.policy, std::string("linear"));
    QCOMPARE(r2.summary.total, 1L);
    QCOMPARE(r2.ended_by, std::string("session end"));
    QVERIFY(!std::get<RunFinished>(s.streams[1]->events.back().payload).completed);
    QVERIFY(!s.splitter.openRun());
  }

  void aStartWhileOpenClosesTheOpenRunCompleted() {
    SplitRecorder s;
    s.feed(0, session());
    s.feed(1, marker(RunMarkAction::Start, 1, "a"));
    s.feed(2, done(1, 0));
    // The book puts an end before the next start; a stream from elsewhere may not, and still splits.
    s.feed(3, marker(RunMarkAction::Start, 2, "b"));
    s.feed(4, done(2, 0));
    s.feed(5, done(3, 0));
    QCOMPARE(s.runs.size(), 1u);
    QCOMPARE(s.runs[0].summary.total, 1L);
    QVERIFY(std::get<RunFinished>(s.streams[0]->events.back().payload).completed);
    QCOMPARE(s.splitter.openRun()->name, std::string("b"));
    // An end for a run that is not open (a late reader) changes nothing.
    s.feed(6, marker(RunMarkAction::End, 1, "a"));
    QCOMPARE(s.runs.size(), 1u);
    s.feed(7, marker(RunMarkAction::End, 2, "b"));
    QCOMPARE(s.runs.size(), 2u);
    QCOMPARE(s.runs[1].summary.total, 2L);
  }
};

QTEST_APPLESS_MAIN(RunMarksTest)
#include "test_run_marks.moc"
