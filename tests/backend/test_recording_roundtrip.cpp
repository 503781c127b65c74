// Recordings lose nothing: a simulation's summary equals the summary computed from its recording
// alone, and the exports of a recording hold every event in a form other tools open.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <optional>

#include <nlohmann/json.hpp>

#include "backend/export/EventExporter.h"
#include "backend/recording/EventRecorder.h"
#include "backend/recording/RecordingPlayer.h"
#include "backend/recording/RecordingWorkload.h"
#include "core/metrics/RunAnalysis.h"
#include "core/model/Error.h"
#include "core/run/SimulationRun.h"

using namespace kvscope;

namespace {
// `scenario` run for `duration_s` and recorded to `path`; its summary, or nothing when the recording
// could not be written.
std::optional<RunSummary> recordRun(const std::string& path, const char* scenario, double duration_s) {
  EventRecorder recorder(path);
  SimulationOptions o;
  o.duration_s = duration_s;
  o.sinks.push_back(&recorder);
  RunSummary summary = runSimulation(Scenario::load(scenario), o);
  if (!recorder.close(nullptr)) return std::nullopt;
  return summary;
}

// Every routing decision of a run, as a line: request, session, turn, choice, every candidate's score.
struct Decisions : EventSink {
  std::vector<std::string> lines;
  void onEvent(const Event& e) override {
    const auto* d = std::get_if<RouteDecision>(&e.payload);
    if (!d) return;
    std::string line = std::to_string(e.time) + " " + std::to_string(d->request) + " " + std::to_string(d->session) +
                       "/" + std::to_string(d->turn) + " -> " + std::to_string(d->chosen) + ":";
    for (const auto& c : d->candidates) line += " " + std::to_string(c.worker) + "=" + std::to_string(c.score);
    lines.push_back(std::move(line));
  }
};

nlohmann::json withoutWallTime(const RunSummary& s) {
  auto j = s.toJson();
  j.erase("wall_seconds");
  j.erase("skipped_records");  // a trace reader's count, not part of the event stream
  return j;
}
}  // namespace

class TestRecordingRoundTrip : public QObject {
  Q_OBJECT
 private slots:
  void reportOfRecordingEqualsSimulationSummary_data() {
    QTest::addColumn<QString>("scenario");
    QTest::newRow("cascade (dead links, aborts)") << "cascade";
    QTest::newRow("invariant-crash (crashes)") << "invariant-crash";
    QTest::newRow("unified-vs-lmetric (no P)") << "unified-vs-lmetric";
  }
  void reportOfRecordingEqualsSimulationSummary() {
    QFETCH(QString, scenario);
    QTemporaryDir dir;
    const std::string path = dir.filePath("run.kvrec").toStdString();
    EventRecorder recorder(path);
    SimulationOptions o;
    o.duration_s = 1800;
    o.sinks.push_back(&recorder);
    const RunSummary simulated = runSimulation(Scenario::load(scenario.toStdString()), o);
    std::string error;
    QVERIFY2(recorder.close(&error), error.c_str());

    RecordingPlayer player(path);
    RunAnalysis analysis;
    const auto events = player.play(analysis);
    QVERIFY(events > 1000);
    QVERIFY(player.damage().problems.empty());
    QCOMPARE(player.run().scenario, scenario.toStdString());
    const auto a = withoutWallTime(simulated), b = withoutWallTime(analysis.summary());
    if (a != b) qWarning() << QString::fromStdString(a.dump()) << "\n!=\n" << QString::fromStdString(b.dump());
    QVERIFY(a == b);
  }

  // A twin run recorded and run again as a trace, with the same scenario, policy, knobs and seed, is
  // the same run: every routing decision (time, request, choice, every candidate's score) and the
  // summary, exactly. The recording is all the second run has of the first's workload.
  void recordingReplaysAsItsOwnWorkload_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<double>("duration");
    QTest::newRow("e3-load-floor (closed loop, kv-aware)") << "e3-load-floor" << 1200.0;
    QTest::newRow("lab-e-burst (burst, cascade)") << "lab-e-burst" << 600.0;
    QTest::newRow("lab-w600-8c (tracets, Poisson, proxy view)") << "lab-w600-8c" << 900.0;
    QTest::newRow("lab-pd-4p4d (vLLM connector)") << "lab-pd-4p4d" << 900.0;
  }
  void recordingReplaysAsItsOwnWorkload() {
    QFETCH(QString, scenario);
    QFETCH(double, duration);
    RecordingWorkload::registerTraceFormat();
    QTemporaryDir dir;
    const std::string path = dir.filePath("run.kvrec").toStdString();
    EventRecorder recorder(path);
    Decisions first, second;
    SimulationOptions o;
    o.duration_s = duration;
    o.sinks = {&recorder, &first};
    const RunSummary original = runSimulation(Scenario::load(scenario.toStdString()), o);
    QVERIFY(recorder.close(nullptr));
    QVERIFY(first.lines.size() > 100);

    const Workload w = RecordingWorkload::read(path);
    QVERIFY(w.times_final);
    QVERIFY(w.modelled.empty());  // a twin run's recording carries every prompt: nothing modelled
    SimulationOptions again;
    again.duration_s = duration;
    again.trace = path;
    again.sinks = {&second};
    const RunSummary replayed = runSimulation(Scenario::load(scenario.toStdString()), again);
    QCOMPARE(second.lines.size(), first.lines.size());
    for (std::size_t i = 0; i < first.lines.size(); ++i)
      if (first.lines[i] != second.lines[i])
        QFAIL(qPrintable(QString::fromStdString(first.lines[i] + "\n!= " + second.lines[i])));
    const auto a = withoutWallTime(original), b = withoutWallTime(replayed);
    if (a != b) qWarning() << QString::fromStdString(a.dump()) << "\n!=\n" << QString::fromStdString(b.dump());
    QVERIFY(a == b);
  }

  // A live run's recording (routes without shapes, finished requests with their sizes and the
  // cached tokens the engine reported) becomes sessions whose turns fire at the recorded arrivals
  // and whose prompts reuse exactly the reported cached tokens: from the session's previous turn, or
  // for a first turn from a prefix all sessions share, to the chains' 256-token block.
  void liveRunBecomesAWorkload() {
    RecordingWorkload b;
    RunStarted run;
    run.scenario = "live";
    b.onEvent(Event{0, 0, run});
    // Session 7: turns at 10 s, 40 s, 70 s; session 9: at 20 s and 55 s. (input, output, cached, e2e s)
    struct Req {
      RequestId id;
      SessionId session;
      int turn;
      double at;
      std::int64_t input, output, cached;
      double e2e;
    };
    const Req reqs[] = {{1, 7, 1, 10, 3000, 200, 0, 5},
                        {2, 9, 1, 20, 2500, 100, 1600, 4},
                        {3, 7, 2, 40, 5000, 300, 3200, 6},
                        {4, 9, 2, 55, 2900, 50, 2600, 2},
                        {5, 7, 3, 70, 9000, 100, -1, 8}};
    std::uint64_t seq = 1;
    for (const Req& r : reqs) {
      RouteDecision d;
      d.request = r.id;
      d.session = r.session;
      d.turn = r.turn;
      b.onEvent(Event{seq++, secondsToTime(r.at), d});
    }
    for (const Req& r : reqs) {
      RequestDone done;
      done.request = r.id;
      done.session = r.session;
      done.turn = r.turn;
      done.e2e = secondsToTime(r.e2e);
      done.ttft = secondsToTime(0.5);
      done.input_tokens = r.input;
      done.output_tokens = r.output;
      done.cached_tokens = r.cached;
      b.onEvent(Event{seq++, secondsToTime(r.at + r.e2e), done});
    }
    const Workload w = b.finish("live.kvrec");
    QVERIFY(w.times_final);
    QCOMPARE(w.dispatch, std::string("tracets"));
    QCOMPARE(w.offered_requests, std::int64_t{5});
    QCOMPARE(w.modelled.size(), std::size_t{1});
    QCOMPARE(w.sessions.size(), std::size_t{2});
    const Session& s7 = w.sessions[0];
    QCOMPARE(s7.id, SessionId{7});
    QCOMPARE(s7.start_s, 10.0);
    QCOMPARE(s7.turns.size(), std::size_t{3});
    QCOMPARE(s7.turns[1].offset_s, 30.0);
    QCOMPARE(s7.turns[1].think_s, 25.0);  // 40 s, after the first turn ended at 15 s
    QCOMPARE(s7.turns[2].think_s, 24.0);  // 70 s, after 46 s
    QCOMPARE(s7.turns[1].output_tokens, 300);
    const auto& t1 = s7.turns[0].prompt.source_hashes;
    const auto& t2 = s7.turns[1].prompt.source_hashes;
    const auto& t3 = s7.turns[2].prompt.source_hashes;
    QCOMPARE(t2.size(), std::size_t{(5000 + 255) / 256});
    QCOMPARE(s7.turns[1].prompt.source_block_size, 256);
    // Turn 2 reused 3,200 tokens, more than turn 1's 3,000: all 12 blocks of turn 1's chain, then its own.
    QCOMPARE(t1.size(), std::size_t{12});
    QVERIFY(std::equal(t2.begin(), t2.begin() + 12, t1.begin()));
    QCOMPARE(std::count(t1.begin(), t1.end(), t2[15]), 0L);
    // Turn 3's cached tokens were not reported: the whole previous prompt and output are its prefix.
    QVERIFY(std::equal(t3.begin(), t3.begin() + static_cast<std::ptrdiff_t>(t2.size()), t2.begin()));
    // Session 9's first turn reused 1,600 tokens nobody of its own sent: a prefix shared by sessions.
    const auto& u1 = w.sessions[1].turns[0].prompt.source_hashes;
    QCOMPARE(std::count(t1.begin(), t1.end(), u1[0]), 0L);  // session 7's first turn reported none cached
  }

  void seekStartsAtAKeyframe() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("run.kvrec").toStdString();
    QVERIFY(recordRun(path, "e3-load-floor", 600));
    RecordingPlayer player(path);
    struct First : EventSink {
      std::optional<Event> first;
      void onEvent(const Event& e) override {
        if (!first) first = e;
      }
    } first;
    player.seek(secondsToTime(305));
    player.play(first);
    QVERIFY(first.first.has_value());
    QVERIFY(std::holds_alternative<Snapshot>(first.first->payload));  // keyframes are snapshots
    QVERIFY(first.first->time <= secondsToTime(305));
    QVERIFY(first.first->time > secondsToTime(305 - 10 - 1));  // the nearest one, every 10 s
  }

  // onlyKinds passes over the other kinds undecoded: the kept events are exactly the full play's
  // events of those kinds, in order; a name that is no kind is refused.
  void onlyKindsKeepsExactlyThoseKinds() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("run.kvrec").toStdString();
    QVERIFY(recordRun(path, "cascade", 300));
    struct Kinds : EventSink {
      std::vector<std::pair<SimTime, std::string>> seen;
      void onEvent(const Event& e) override { seen.emplace_back(e.time, eventKindName(e.payload)); }
    } all, some;
    RecordingPlayer(path).play(all);
    RecordingPlayer filtered(path);
    filtered.onlyKinds({"route", "request_done"});
    filtered.play(some);
    decltype(all.seen) expected;
    for (const auto& s : all.seen)
      if (s.second == "route" || s.second == "request_done") expected.push_back(s);
    QVERIFY(expected.size() > 100 && expected.size() < all.seen.size());
    QVERIFY(some.seen == expected);
    QVERIFY(filtered.damage().problems.empty());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, filtered.onlyKinds({"routes"}));
  }

  void notARecordingIsAClearError() {
    QTemporaryDir dir;
    const QString path = dir.filePath("notes.kvrec");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is a text file, not a recording\n");
    f.close();
    try {
      RecordingPlayer player(path.toStdString());
      QFAIL("opened a text file as a recording");
    } catch (const InputError& e) {
      QVERIFY(QString(e.what()).contains("notes.kvrec"));
    }
  }

  // Notes as JSON lines sit among the events by time: the event before a note's line is earlier,
  // the line after it is not (a note goes before the events at its own time).
  void notesInJsonLinesAreInTimeOrder() {
    QTemporaryDir dir;
    const std::string rec = dir.filePath("run.kvrec").toStdString(), out = dir.filePath("run.jsonl").toStdString();
    QVERIFY(recordRun(rec, "e3-load-floor", 300));
    auto exporter = EventExporter::create(EventExporter::Format::JsonLines, out);
    exporter->setNotes({{secondsToTime(0), "start"}, {secondsToTime(120.5), "look here"}});
    RecordingPlayer(rec).play(*exporter);
    QVERIFY(exporter->finish(nullptr));
    QFile f(QString::fromStdString(out));
    QVERIFY(f.open(QIODevice::ReadOnly));
    std::vector<std::pair<double, QString>> lines;  // (t_us, kind)
    for (const QByteArray& line : f.readAll().split('\n'))
      if (!line.isEmpty()) {
        const QJsonObject j = QJsonDocument::fromJson(line).object();
        lines.emplace_back(j["t_us"].toDouble(), j["kind"].toString());
      }
    int seen = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].second != "note") continue;
      ++seen;
      if (i > 0 && lines[i - 1].second != "note") QVERIFY(lines[i - 1].first < lines[i].first);
      if (i + 1 < lines.size()) QVERIFY(lines[i + 1].first >= lines[i].first);
    }
    QCOMPARE(seen, 2);
  }

  void chromeTraceOpensAsTraceEventJson() {
    QTemporaryDir dir;
    const std::string rec = dir.filePath("run.kvrec").toStdString(), out = dir.filePath("trace.json").toStdString();
    const std::optional<RunSummary> s = recordRun(rec, "invariant-crash", 900);
    QVERIFY(s);
    RecordingPlayer player(rec);
    auto exporter = EventExporter::create(EventExporter::Format::ChromeTrace, out);
    // An operator's notes go in as global instants at their times (one past the run's end too).
    exporter->setNotes({{secondsToTime(300), "D1 crashes next"}, {secondsToTime(5000), "after the end"}});
    player.play(*exporter);
    std::string error;
    QVERIFY2(exporter->finish(&error), error.c_str());
    QFile f(QString::fromStdString(out));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonParseError parse;
    const auto doc = QJsonDocument::fromJson(f.readAll(), &parse);
    QCOMPARE(parse.error, QJsonParseError::NoError);
    long slices = 0, counters = 0, crashes = 0;
    QStringList notes;
    for (const auto& v : doc.object()["traceEvents"].toArray()) {
      const auto e = v.toObject();
      slices += e["ph"] == "X";
      counters += e["ph"] == "C";
      crashes += e["ph"] == "i" && e["name"] == "crash";
      if (e["name"].toString().startsWith("note: ")) {
        QCOMPARE(e["s"].toString(), QString("g"));
        notes << QString("%1 %2").arg(e["ts"].toDouble(), 0, 'f', 0).arg(e["args"].toObject()["text"].toString());
      }
    }
    QCOMPARE(notes, QStringList({"300000000 D1 crashes next", "5000000000 after the end"}));
    long served = s->total;
    QVERIFY(slices > 0 && slices <= served);  // every request that reached a worker is a slice
    QVERIFY(counters > 0);
    QCOMPARE(crashes, s->worker_crashes);
  }
};

QTEST_GUILESS_MAIN(TestRecordingRoundTrip)
#include "test_recording_roundtrip.moc"
