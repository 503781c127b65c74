// `serve --runs DIR`: a live session's marked runs each become a recording of their own that
// replays from seq 0 with the run's name and knobs, and a summary equal to what `report` computes
// from that recording; runs.json lists them in order; a run the session's end cut short says so.
#include <QtTest>

#include <QTemporaryDir>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "backend/recording/MarkedRunRecorder.h"
#include "backend/recording/RecordingPlayer.h"
#include "core/metrics/RunAnalysis.h"
#include "core/model/Error.h"

using namespace kvscope;
namespace fs = std::filesystem;

namespace {
// A session's stream with its own numbering and clock, as LiveRouter publishes it.
class Session {
 public:
  explicit Session(EventSink& sink) : sink_(sink) {}
  void at(double seconds, EventPayload payload) {
    sink_.onEvent(Event{seq_++, secondsToTime(seconds), std::move(payload)});
  }
  void done(double seconds, WorkerId worker, bool ok) {
    RequestDone d;
    d.request = ++request_;
    d.session = request_;
    d.turn = 1;
    d.worker = worker;
    d.status = ok ? RequestStatus::Ok : RequestStatus::Failed;
    d.ttft = secondsToTime(0.2);
    d.e2e = secondsToTime(1.5);
    d.input_tokens = 1000;
    d.output_tokens = 100;
    at(seconds, d);
  }

 private:
  EventSink& sink_;
  std::uint64_t seq_ = 0;
  RequestId request_ = 0;
};

RunMarked start(std::uint32_t index, std::string name, std::vector<std::pair<std::string, std::string>> parameters) {
  return RunMarked{RunMarkAction::Start, index, std::move(name), std::move(parameters), "sweep.sh", {}};
}

Snapshot gauges(std::int64_t kv_used) {
  Snapshot s;
  for (WorkerId w = 0; w < 2; ++w) {
    WorkerGauges g;
    g.worker = w;
    g.kv_used = g.kv_peak = kv_used;
    g.kv_capacity = 100000;
    s.workers.push_back(g);
  }
  return s;
}

nlohmann::json readJson(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

struct Replayed {
  std::vector<Event> events;
  nlohmann::json summary;  // RunAnalysis over the recording, as `kvscope-cli report` computes it
};

Replayed replay(const fs::path& path) {
  RecordingPlayer player(path.string());
  Replayed out;
  RunAnalysis analysis;
  Event e;
  while (player.next(e)) {
    analysis.onEvent(e);
    out.events.push_back(e);
  }
  out.summary = analysis.summary().toJson();
  out.summary.erase("wall_seconds");
  return out;
}
}  // namespace

class TestMarkedRunRecorder : public QObject {
  Q_OBJECT
 private slots:
  void writesOneRecordingAndSummaryPerRun() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "runs";  // created by the recorder
    std::vector<RecordedRun> completed;
    std::mutex mutex;
    MarkedRunRecorder recorder(dir.string(), [&](const RecordedRun& r) {
      std::lock_guard lock(mutex);
      completed.push_back(r);
    });

    Session s(recorder);
    RunStarted session;
    session.scenario = "live";
    session.policy = "kv-aware";
    session.workers = {{"D0", WorkerRole::Decode, 100000}, {"D1", WorkerRole::Decode, 100000}};
    session.knobs = {{"K", 0}};
    s.at(0, session);
    s.at(1, gauges(10));
    s.done(1.5, 0, true);  // before any run: in no run's files
    s.at(2, start(1, "k200", {{"K", "200"}, {"flags", "--x=1"}}));
    s.at(2.1, KnobChanged{"K", 0, 200, "sweep.sh", {}});
    s.done(3, 0, true);
    s.done(4, 1, true);
    s.done(5, 1, false);
    s.at(5.5, gauges(20));
    // The script died and started the next run: the open run ends at this start.
    s.at(6, start(2, "k 400/x", {{"K", "400"}}));
    s.at(6.1, KnobChanged{"K", 200, 400, "sweep.sh", {}});
    s.done(7, 0, true);
    s.done(8, 1, true);
    s.at(9, RunMarked{RunMarkAction::End, 2, "k 400/x", {{"K", "400"}}, "sweep.sh", {}});
    s.done(9.5, 0, true);  // between runs
    s.at(10, start(3, "cut-short", {}));
    s.done(11, 0, true);
    s.at(12, RunFinished{false});  // the session stops with run 3 open
    std::string error;
    QVERIFY2(recorder.close(&error), error.c_str());

    const std::vector<std::string> stems{"001-k200", "002-k-400-x", "003-cut-short"};
    const std::vector<long> requests{3, 2, 1};
    const std::vector<std::string> ended_by{"sweep.sh", "sweep.sh", "session end"};
    const std::vector<double> knob_k{0, 200, 400};
    QCOMPARE(completed.size(), std::size_t{3});
    for (const auto& entry : fs::directory_iterator(dir))  // nothing half-written is left behind
      QVERIFY2(entry.path().filename().string().find("partial") == std::string::npos, entry.path().c_str());

    const nlohmann::json runs = readJson(dir / "runs.json");
    QCOMPARE(runs.size(), std::size_t{3});
    for (std::size_t i = 0; i < stems.size(); ++i) {
      const fs::path recording = dir / (stems[i] + ".kvrec");
      QVERIFY2(fs::is_regular_file(recording), recording.c_str());
      QCOMPARE(completed[i].error, std::string());
      QCOMPARE(completed[i].summary, (dir / (stems[i] + ".json")).string());

      const Replayed r = replay(recording);
      QVERIFY(!r.events.empty());
      for (std::size_t k = 0; k < r.events.size(); ++k) QCOMPARE(r.events[k].seq, std::uint64_t{k});
      const auto* header = std::get_if<RunStarted>(&r.events.front().payload);
      QVERIFY(header);
      QCOMPARE(r.events.front().time, SimTime{0});
      QCOMPARE(header->scenario, completed[i].run.start.name);
      QCOMPARE(header->knobs, (std::vector<std::pair<std::string, double>>{{"K", knob_k[i]}}));
      QVERIFY(std::holds_alternative<Snapshot>(r.events[1].payload));  // gauges known from the start
      const auto* finished = std::get_if<RunFinished>(&r.events.back().payload);
      QVERIFY(finished);
      QCOMPARE(finished->completed, i != 2);

      nlohmann::json summary = readJson(dir / (stems[i] + ".json"));
      const nlohmann::json run = summary.at("run");
      summary.erase("run");
      summary.erase("wall_seconds");
      if (summary != r.summary)
        qWarning() << QString::fromStdString(summary.dump()) << "\n!=\n" << QString::fromStdString(r.summary.dump());
      QVERIFY(summary == r.summary);
      QCOMPARE(summary["requests"]["total"].get<long>(), requests[i]);
      QCOMPARE(run.at("index").get<int>(), int(i + 1));
      QCOMPARE(run.at("ended_by").get<std::string>(), ended_by[i]);
      QCOMPARE(run.at("recording").get<std::string>(), stems[i] + ".kvrec");
      QCOMPARE(runs[i].at("index"), run.at("index"));
      QCOMPARE(runs[i].at("recording"), run.at("recording"));
      QCOMPARE(runs[i].at("requests").at("total").get<long>(), requests[i]);
    }
    const nlohmann::json first = readJson(dir / "001-k200.json").at("run");
    QCOMPARE(first.at("parameters"), nlohmann::json::parse(R"([["K","200"],["flags","--x=1"]])"));
    QCOMPARE(first.at("session_start_us").get<SimTime>(), secondsToTime(2));
    QCOMPARE(first.at("session_end_us").get<SimTime>(), secondsToTime(6));
    QCOMPARE(readJson(dir / "001-k200.json").at("requests").at("failed").get<long>(), 1L);
  }

  void closeEndsARunTheStreamLeftOpen() {
    QTemporaryDir tmp;
    MarkedRunRecorder recorder(tmp.path().toStdString());
    Session s(recorder);
    s.at(0, RunStarted{});
    s.at(1, start(1, "open", {}));
    s.done(2, 0, true);
    std::string error;
    QVERIFY2(recorder.close(&error), error.c_str());
    const Replayed r = replay(fs::path(tmp.path().toStdString()) / "001-open.kvrec");
    QCOMPARE(r.summary.at("requests").at("total").get<long>(), 1L);
    QCOMPARE(readJson(fs::path(tmp.path().toStdString()) / "runs.json").size(), std::size_t{1});
  }

  void fileStemKeepsSafeCharactersOnly() {
    QCOMPARE(MarkedRunRecorder::fileStem(7, "k200_v1.2-b"), std::string("007-k200_v1.2-b"));
    QCOMPARE(MarkedRunRecorder::fileStem(12, "K=200 / ../etc"), std::string("012-K-200---..-etc"));
    QCOMPARE(MarkedRunRecorder::fileStem(1000, std::string(200, 'x')).size(), std::size_t{5 + 48});
  }

  // A session killed with a run open left its recording as a hidden .partial. A
  // restart on the same directory keeps it (renamed, byte for byte) and never writes over it.
  void aRestartKeepsWhatAKilledSessionLeft() {
    QTemporaryDir tmp;
    const fs::path dir(tmp.path().toStdString());
    const std::string killed(91 * 1024, 'k');
    std::ofstream(dir / ".001-k200.kvrec.partial", std::ios::binary) << killed;
    std::ofstream(dir / ".runs.json.partial") << "[{\"index\": 1";
    std::ofstream(dir / "recovered-001-k200-1.kvrec") << "an earlier recovery";
    {
      MarkedRunRecorder recorder(dir.string());
      QCOMPARE(recorder.recovered().size(), std::size_t{2});
      Session s(recorder);
      s.at(0, RunStarted{});
      s.at(1, start(1, "k200", {{"K", "200"}}));
      s.done(2, 0, true);
      std::string error;
      QVERIFY2(recorder.close(&error), error.c_str());
    }
    std::ifstream in(dir / "recovered-001-k200-2.kvrec", std::ios::binary);
    QCOMPARE(std::string(std::istreambuf_iterator<char>(in), {}), killed);
    std::ifstream earlier(dir / "recovered-001-k200-1.kvrec");
    QCOMPARE(std::string(std::istreambuf_iterator<char>(earlier), {}), std::string("an earlier recovery"));
    QVERIFY(fs::exists(dir / "recovered-runs-1.json"));
    QVERIFY(fs::file_size(dir / "001-k200.kvrec") > 0);
    QVERIFY(!fs::exists(dir / ".001-k200.kvrec.partial"));
    QCOMPARE(readJson(dir / "runs.json").size(), std::size_t{1});
  }

  void refusesADirectoryItCannotUse() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "plain-file";
    std::ofstream(file) << "x";
    QVERIFY_THROWS_EXCEPTION(InputError, MarkedRunRecorder((file / "runs").string()));
    QVERIFY_THROWS_EXCEPTION(InputError, MarkedRunRecorder(file.string()));
    // An earlier session's runs would be overwritten by this session's run 1, 2, ...
    std::ofstream(fs::path(tmp.path().toStdString()) / "runs.json") << "[]";
    QVERIFY_THROWS_EXCEPTION(InputError, MarkedRunRecorder(tmp.path().toStdString()));
  }
};

QTEST_GUILESS_MAIN(TestMarkedRunRecorder)
#include "test_marked_run_recorder.moc"
