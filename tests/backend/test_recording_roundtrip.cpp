// Recordings lose nothing: a simulation's summary equals the summary computed from its recording
// alone, and the exports of a recording hold every event in a form other tools open.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include "backend/export/EventExporter.h"
#include "backend/recording/EventRecorder.h"
#include "backend/recording/RecordingPlayer.h"
#include "core/metrics/RunAnalysis.h"
#include "core/model/Error.h"
#include "core/run/SimulationRun.h"

using namespace kvscope;

namespace {
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

  void seekStartsAtAKeyframe() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("run.kvrec").toStdString();
    EventRecorder recorder(path, 10.0);
    SimulationOptions o;
    o.duration_s = 600;
    o.sinks.push_back(&recorder);
    runSimulation(Scenario::load("e3-load-floor"), o);
    QVERIFY(recorder.close(nullptr));
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

  void chromeTraceOpensAsTraceEventJson() {
    QTemporaryDir dir;
    const std::string rec = dir.filePath("run.kvrec").toStdString(), out = dir.filePath("trace.json").toStdString();
    EventRecorder recorder(rec);
    SimulationOptions o;
    o.duration_s = 900;
    o.sinks.push_back(&recorder);
    const auto s = runSimulation(Scenario::load("invariant-crash"), o);
    QVERIFY(recorder.close(nullptr));
    RecordingPlayer player(rec);
    auto exporter = EventExporter::create(EventExporter::Format::ChromeTrace, out);
    player.play(*exporter);
    std::string error;
    QVERIFY2(exporter->finish(&error), error.c_str());
    QFile f(QString::fromStdString(out));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonParseError parse;
    const auto doc = QJsonDocument::fromJson(f.readAll(), &parse);
    QCOMPARE(parse.error, QJsonParseError::NoError);
    long slices = 0, counters = 0, crashes = 0;
    for (const auto& v : doc.object()["traceEvents"].toArray()) {
      const auto e = v.toObject();
      slices += e["ph"] == "X";
      counters += e["ph"] == "C";
      crashes += e["ph"] == "i" && e["name"] == "crash";
    }
    long served = s.total;
    QVERIFY(slices > 0 && slices <= served);  // every request that reached a worker is a slice
    QVERIFY(counters > 0);
    QCOMPARE(crashes, s.worker_crashes);
  }
};

QTEST_GUILESS_MAIN(TestRecordingRoundTrip)
#include "test_recording_roundtrip.moc"
