// RemoteSource against a real KvscopeServer on 127.0.0.1 around a real simulation: every event of
// the run staged once and in order, knob/policy/pace changes reaching the run with the console as
// their author and the server's refusals coming back, the bearer token, a server that goes away
// and comes back on the same port (resume at last seq + 1), a restarted server with a new run, and
// stop() leaving no callback behind. No timed assertions: conditions are awaited generously.
#include <QtTest>

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <atomic>
#include <future>

#include <grpcpp/grpcpp.h>

#include <nlohmann/json.hpp>

#include "backend/service/KvscopeServer.h"
#include "backend/service/TelemetryHub.h"
#include "backend/source/RemoteSource.h"
#include "core/events/EventJson.h"
#include "core/model/Error.h"
#include "core/run/SimulationRunner.h"
#include "core/run/WorkloadFactory.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

using namespace kvscope;

namespace {

constexpr int kWaitMs = 120000;  // generous: the CI machine is shared
constexpr auto kWait = std::chrono::seconds(120);
const char* kToken = "s3cret-Token_42";

// What the run published, collected in this process: what the remote source must reproduce.
struct Collector : EventSink {
  void onEvent(const Event& e) override {
    std::lock_guard lock(mutex);
    events.push_back(e);
  }
  std::vector<Event> copy() {
    std::lock_guard lock(mutex);
    return events;
  }
  std::mutex mutex;
  std::vector<Event> events;
};

// One simulated run feeding the hub a server serves and a local collector.
struct Run {
  explicit Run(double duration_s, std::uint64_t seed_offset = 0) {
    Scenario s = Scenario::load("e3-load-floor");
    s.duration_s = duration_s;
    s.seed += seed_offset;
    runner = std::make_unique<SimulationRunner>(s, buildWorkload(s, s.seed), std::vector<EventSink*>{&hub, &local});
  }
  TelemetryHub hub;
  Collector local;
  std::unique_ptr<SimulationRunner> runner;  // last: stopped and joined before the sinks go
};

std::unique_ptr<KvscopeServer> serve(Run& run, const std::string& listen = "127.0.0.1:0", std::string token_file = {},
                                     bool open_telemetry = false) {
  ServerOptions o;
  o.listen = listen;
  o.token_file = std::move(token_file);
  o.open_telemetry = open_telemetry;
  std::string error;
  auto server = KvscopeServer::start(o, run.hub, *run.runner, &error);
  if (!server) qWarning("server: %s", error.c_str());
  return server;
}

// Everything a source staged so far, across drains.
struct Staged {
  void drain(Source& source) {
    source.staging().drain(scratch);
    all.insert(all.end(), scratch.begin(), scratch.end());
  }
  std::vector<Event> all;
  std::vector<Event> scratch;
};

// Same events (by content), in the same order.
bool sameEvents(const std::vector<Event>& got, const std::vector<Event>& want, std::string* why) {
  if (got.size() != want.size()) {
    *why = "got " + std::to_string(got.size()) + " events, want " + std::to_string(want.size());
    return false;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto a = eventToJson(got[i]).dump(), b = eventToJson(want[i]).dump();
    if (a != b) {
      *why = "event " + std::to_string(i) + ": got " + a.substr(0, 300) + ", want " + b.substr(0, 300);
      return false;
    }
  }
  return true;
}

bool strictlyIncreasing(const std::vector<Event>& events) {
  for (std::size_t i = 1; i < events.size(); ++i)
    if (events[i].seq <= events[i - 1].seq) return false;
  return true;
}

// A server that accepts every call and never answers: what a hung process or a half-open
// connection looks like to a client (the stream stays open, nothing arrives).
struct SilentTelemetry final : v1::Telemetry::CallbackService {
  template <class Base>
  struct Silent final : Base {
    void OnCancel() override { this->Finish(grpc::Status::CANCELLED); }
    void OnDone() override { delete this; }
  };
  grpc::ServerWriteReactor<v1::TelemetryMessage>* Subscribe(grpc::CallbackServerContext*,
                                                            const v1::SubscribeRequest*) override {
    ++subscribes;
    return new Silent<grpc::ServerWriteReactor<v1::TelemetryMessage>>;
  }
  grpc::ServerUnaryReactor* GetState(grpc::CallbackServerContext*, const v1::GetStateRequest*, v1::State*) override {
    return new Silent<grpc::ServerUnaryReactor>;
  }
  std::atomic<int> subscribes{0};
};

using Reply = std::pair<bool, std::string>;

// Waits for a control call's `done`; {false, "no reply"} when it never comes.
template <class Call>
Reply awaitReply(Call call) {
  auto promise = std::make_shared<std::promise<Reply>>();
  auto future = promise->get_future();
  call([promise](KnobRegistry::Result r) { promise->set_value({r.ok, std::move(r.error)}); });
  if (future.wait_for(kWait) != std::future_status::ready) return {false, "no reply"};
  return future.get();
}

Reply applyKnobs(RemoteSource& source, std::map<std::string, double> changes) {
  return awaitReply([&](RunControl::Done done) {
    source.control()->applyKnobs(std::move(changes), consoleAuthor(), std::move(done));
  });
}

Reply setPolicy(RemoteSource& source, std::string name) {
  return awaitReply(
      [&](RunControl::Done done) { source.control()->setPolicy(std::move(name), consoleAuthor(), std::move(done)); });
}

bool running(const RemoteSource& source) { return source.status().state == SourceState::Running; }

QString describe(const SourceStatus& s) {
  return QString::fromLatin1(toString(s.state)) + ": " + QString::fromStdString(s.detail);
}

}  // namespace

class TestRemoteSource : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  std::string writeFile(const QString& name, const QByteArray& content) {
    QFile f(dir_.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(content);
    return f.fileName().toStdString();
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    // "localhost" (the TLS test's certificate name) through the system resolver: gRPC's c-ares
    // resolver leaks a few bytes at exit, which LeakSanitizer reports in sanitised builds.
    qputenv("GRPC_DNS_RESOLVER", "native");
  }

  void stagesEveryEventOnceInOrder() {
    Run run(600);
    auto server = serve(run);
    QVERIFY(server);
    RemoteSource source(server->address());
    QCOMPARE(source.description(), "server " + server->address());
    QCOMPARE(source.status().state, SourceState::Starting);
    source.start();
    QTRY_COMPARE_WITH_TIMEOUT(run.hub.subscribers(), std::size_t{1}, kWaitMs);
    run.runner->start(200);
    QTRY_VERIFY2_WITH_TIMEOUT(source.status().state == SourceState::Finished, qPrintable(describe(source.status())),
                              kWaitMs);
    run.runner->waitFinished();
    Staged staged;
    staged.drain(source);
    std::string why;
    QVERIFY2(sameEvents(staged.all, run.local.copy(), &why), why.c_str());
    QVERIFY(std::holds_alternative<RunStarted>(staged.all.front().payload));
    QVERIFY(std::holds_alternative<RunFinished>(staged.all.back().payload));
    QCOMPARE(source.status().time, staged.all.back().time);
    QVERIFY2(source.status().detail.find("missed") == std::string::npos, source.status().detail.c_str());
    QCOMPARE(source.subscribedFrom(), std::uint64_t{0});
  }

  void workerHealthFromTheStream() {
    // What `serve --live` publishes when a scrape fails: the remote console shows it per worker.
    Run run(600);  // not started: this test publishes the stream itself
    auto server = serve(run);
    QVERIFY(server);
    RunStarted header;
    header.scenario = "live lab";
    header.workers = {{"D0", WorkerRole::Decode, 1000}, {"D1", WorkerRole::Decode, 1000}};
    run.hub.onEvent({0, 0, header});
    run.hub.onEvent({1, 10, WorkerHealthChanged{"D1", WorkerHealth::Unreachable, "GET /metrics: Connection refused"}});
    run.hub.onEvent({2, 20, WorkerHealthChanged{"D0", WorkerHealth::Ok, ""}});
    RemoteSource source(server->address());
    source.start();
    QTRY_COMPARE_WITH_TIMEOUT(source.status().worker_health["D1"],
                              std::string("unreachable: GET /metrics: Connection refused"), kWaitMs);
    QCOMPARE(source.status().worker_health.at("D0"), std::string("ok"));
    run.hub.onEvent({3, 30, WorkerHealthChanged{"D1", WorkerHealth::Ok, ""}});
    QTRY_COMPARE_WITH_TIMEOUT(source.status().worker_health["D1"], std::string("ok"), kWaitMs);
    source.stop();
  }

  void controlReachesTheRunAndRefusalsComeBack() {
    Run run(3600);
    auto server = serve(run);
    QVERIFY(server);
    run.runner->start(20);
    RemoteSource source(server->address());
    source.start();
    QTRY_VERIFY2_WITH_TIMEOUT(running(source), qPrintable(describe(source.status())), kWaitMs);
    const SourceCapabilities caps = source.capabilities();
    QVERIFY(caps.pause && caps.speed && caps.knobs && caps.seek);

    // The scenario has K = 200: 100 is a change, so the run publishes it with the console as author.
    Reply r = applyKnobs(source, {{"K", 100}});
    QVERIFY2(r.first, r.second.c_str());
    Staged staged;
    const auto knobEvent = [&] {
      staged.drain(source);
      for (const auto& e : staged.all)
        if (const auto* k = std::get_if<KnobChanged>(&e.payload))
          if (k->name == "K" && k->new_value == 100 && k->who.rfind("console", 0) == 0) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(knobEvent(), kWaitMs);
    QCOMPARE(run.hub.state().knobs.at("K"), 100.0);

    r = applyKnobs(source, {{"K", 20000}});
    QVERIFY(!r.first);
    QVERIFY2(r.second.find("'K'") != std::string::npos && r.second.find("[0, 10000]") != std::string::npos,
             r.second.c_str());
    QCOMPARE(run.hub.state().knobs.at("K"), 100.0);

    r = setPolicy(source, "linear");
    QVERIFY2(r.first, r.second.c_str());
    QTRY_COMPARE_WITH_TIMEOUT(run.hub.state().policy, std::string("linear"), kWaitMs);
    r = setPolicy(source, "no-such-policy");
    QVERIFY(!r.first);
    QVERIFY2(r.second.find("valid policies") != std::string::npos, r.second.c_str());

    source.control()->pause(consoleAuthor());
    QTRY_COMPARE_WITH_TIMEOUT(source.status().state, SourceState::Paused, kWaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(run.runner->paused(), kWaitMs);  // the run announces a pause before it stands still
    source.control()->setSpeed(100, consoleAuthor());
    QTRY_COMPARE_WITH_TIMEOUT(source.status().speed, 100.0, kWaitMs);
    source.control()->resume(consoleAuthor());
    QTRY_COMPARE_WITH_TIMEOUT(source.status().state, SourceState::Running, kWaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(!run.runner->paused(), kWaitMs);
    const auto byConsole = [&](RunAction action) {
      staged.drain(source);
      for (const auto& e : staged.all)
        if (const auto* c = std::get_if<RunControlChanged>(&e.payload))
          if (c->action == action && c->who.rfind("console", 0) == 0) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(
        byConsole(RunAction::Paused) && byConsole(RunAction::Resumed) && byConsole(RunAction::Speed), kWaitMs);

    // A live run cannot seek: the first attempt is sent, the server's refusal turns seeking off and
    // comes back from the next one.
    std::string error = "stale";
    QVERIFY(source.control()->seek(1'000'000, consoleAuthor(), &error));
    QVERIFY(error.empty());
    QTRY_VERIFY_WITH_TIMEOUT(!source.capabilities().seek, kWaitMs);
    QVERIFY(!source.control()->seek(1'000'000, consoleAuthor(), &error));
    QVERIFY2(error.find("recordings") != std::string::npos, error.c_str());
    QVERIFY2(source.status().detail.find("seek refused") != std::string::npos, source.status().detail.c_str());
    QVERIFY(strictlyIncreasing(staged.all));
  }

  // --token-file guards the run's stream too; --open-telemetry keeps it open.
  void tokenGuardsTelemetryUnlessOpen() {
    Run run(3600);
    const std::string token_file = writeFile("token", QByteArray(kToken) + "\n");
    auto guarded = serve(run, "127.0.0.1:0", token_file);
    QVERIFY(guarded);
    run.runner->start(20);
    RemoteSource with(guarded->address(), token_file);
    with.start();
    QTRY_VERIFY2_WITH_TIMEOUT(running(with), qPrintable(describe(with.status())), kWaitMs);
    RemoteSource without(guarded->address());
    without.start();
    QTRY_VERIFY2_WITH_TIMEOUT(without.status().detail.find("bearer token") != std::string::npos,
                              qPrintable(describe(without.status())), kWaitMs);
    QVERIFY(!running(without));
  }

  void tokenGuardsControlNotTelemetry() {
    Run run(3600);
    const std::string token_file = writeFile("token", QByteArray(kToken) + "\n");
    auto server = serve(run, "127.0.0.1:0", token_file, /*open_telemetry=*/true);
    QVERIFY(server);
    QVERIFY(server->tokenRequired());
    run.runner->start(20);

    RemoteSource with(server->address(), token_file);
    with.start();
    Reply r = applyKnobs(with, {{"K", 300}});
    QVERIFY2(r.first, r.second.c_str());
    QCOMPARE(run.hub.state().knobs.at("K"), 300.0);

    RemoteSource without(server->address());
    without.start();
    QTRY_VERIFY2_WITH_TIMEOUT(running(without), qPrintable(describe(without.status())), kWaitMs);  // telemetry is open
    r = applyKnobs(without, {{"K", 400}});
    QVERIFY(!r.first);
    QVERIFY2(r.second.find("bearer token") != std::string::npos, r.second.c_str());
    QVERIFY2(r.second.find(kToken) == std::string::npos, r.second.c_str());
    QCOMPARE(run.hub.state().knobs.at("K"), 300.0);

    const std::string wrong_file = writeFile("wrong", "not-the-token");
    RemoteSource wrong(server->address(), wrong_file);
    wrong.start();
    r = setPolicy(wrong, "linear");
    QVERIFY(!r.first);
    QVERIFY2(r.second.find("bearer token") != std::string::npos, r.second.c_str());

    // The console with the right token sees where the refused calls came from (GetState): the two
    // refusals above, both from this host.
    QTRY_VERIFY2_WITH_TIMEOUT(
        with.status().detail.find("the server refused 2 calls (wrong or missing token) from loopback") !=
            std::string::npos,
        qPrintable(describe(with.status())), kWaitMs);

    // A token file that cannot be used is refused up front, naming the file.
    const std::string empty = writeFile("empty", " \n");
    bool thrown = false;
    try {
      RemoteSource bad(server->address(), empty);
    } catch (const InputError& e) {
      thrown = std::string(e.what()).find(empty) != std::string::npos;
    }
    QVERIFY(thrown);
  }

  void reconnectsAndResumesAfterTheLastSeq() {
    Run run(600);
    auto server = serve(run);
    QVERIFY(server);
    const int port = server->port();
    RemoteSource source(server->address());
    source.start();
    QTRY_COMPARE_WITH_TIMEOUT(run.hub.subscribers(), std::size_t{1}, kWaitMs);
    run.runner->start(20);  // half a minute: the server goes away mid-run
    Staged staged;
    QTRY_VERIFY_WITH_TIMEOUT((staged.drain(source), staged.all.size() > 200), kWaitMs);

    server->shutdown();
    server.reset();
    QTRY_VERIFY2_WITH_TIMEOUT(source.status().state == SourceState::Disconnected, qPrintable(describe(source.status())),
                              kWaitMs);
    QVERIFY2(source.status().detail.find("reconnecting in") != std::string::npos, source.status().detail.c_str());
    staged.drain(source);
    const std::uint64_t last = staged.all.back().seq;
    QVERIFY(!run.runner->finished());  // the run went on without the server

    server = serve(run, "127.0.0.1:" + std::to_string(port));  // the same hub, the same port
    QVERIFY(server);
    QTRY_VERIFY2_WITH_TIMEOUT(source.subscribedFrom() == last + 1 && running(source),
                              qPrintable(describe(source.status())), kWaitMs);
    run.runner->setSpeed(200, "test");  // the rest quickly, at a pace a reader keeps up with
    run.runner->waitFinished();
    QTRY_VERIFY2_WITH_TIMEOUT(source.status().state == SourceState::Finished, qPrintable(describe(source.status())),
                              kWaitMs);
    staged.drain(source);
    std::string why;
    QVERIFY2(sameEvents(staged.all, run.local.copy(), &why), why.c_str());  // no duplicate, nothing lost
    QVERIFY2(source.status().detail.find("missed") == std::string::npos, source.status().detail.c_str());
  }

  void followsANewRunOnARestartedServer() {
    auto first = std::make_unique<Run>(3600);
    Run second(3600, 1);  // another seed: another run, numbered from 0 again (built now: it takes a while)
    auto server = serve(*first);
    QVERIFY(server);
    const int port = server->port();
    first->runner->start(20);
    RemoteSource source(server->address());
    source.start();
    Staged staged;
    QTRY_VERIFY_WITH_TIMEOUT((staged.drain(source), staged.all.size() > 200), kWaitMs);
    server->shutdown();
    server.reset();
    first.reset();
    QTRY_COMPARE_WITH_TIMEOUT(source.status().state, SourceState::Disconnected, kWaitMs);
    staged.drain(source);
    const std::size_t before = staged.all.size();

    server = serve(second, "127.0.0.1:" + std::to_string(port));
    QVERIFY(server);
    second.runner->start(20);
    QTRY_VERIFY_WITH_TIMEOUT((staged.drain(source), staged.all.size() > before + 100), kWaitMs);
    QCOMPARE(source.subscribedFrom(), std::uint64_t{0});
    QCOMPARE(staged.all[before].seq, std::uint64_t{0});
    QVERIFY(std::holds_alternative<RunStarted>(staged.all[before].payload));
    QVERIFY2(source.status().detail.find("new run") != std::string::npos, source.status().detail.c_str());
  }

  void tlsWithARootCertificate() {
    const QString openssl = QStandardPaths::findExecutable("openssl");
    QVERIFY2(!openssl.isEmpty(), "openssl is missing (scripts/deps.sh installs it): it makes the test certificate");
    const QString cert = dir_.filePath("cert.pem"), key = dir_.filePath("key.pem");
    QProcess p;
    p.start(openssl,
            {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    Run run(3600);
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.tls_cert = cert.toStdString();
    o.tls_key = key.toStdString();
    std::string error;
    auto server = KvscopeServer::start(o, run.hub, *run.runner, &error);
    QVERIFY2(server, error.c_str());
    run.runner->start(20);
    const std::string target = "localhost:" + std::to_string(server->port());  // the certificate's name
    RemoteSource secure(target, {}, true, cert.toStdString());
    secure.start();
    QTRY_VERIFY2_WITH_TIMEOUT(running(secure), qPrintable(describe(secure.status())), kWaitMs);
    const Reply r = applyKnobs(secure, {{"K", 100}});
    QVERIFY2(r.first, r.second.c_str());

    RemoteSource plain(target);  // a plaintext client never gets through
    plain.start();
    QTRY_VERIFY2_WITH_TIMEOUT(plain.status().state == SourceState::Disconnected, qPrintable(describe(plain.status())),
                              kWaitMs);
  }

  void aServerThatStopsAnsweringCountsAsLost() {
    SilentTelemetry silent;
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&silent);
    auto server = builder.BuildAndStart();
    QVERIFY(server && port > 0);
    RemoteSource source("127.0.0.1:" + std::to_string(port));
    source.start();
    QTRY_VERIFY2_WITH_TIMEOUT(source.status().state == SourceState::Disconnected, qPrintable(describe(source.status())),
                              kWaitMs);
    QVERIFY2(source.status().detail.find("Deadline Exceeded") != std::string::npos, source.status().detail.c_str());
    QTRY_VERIFY_WITH_TIMEOUT(silent.subscribes.load() >= 2, kWaitMs);  // and it tries again
    source.stop();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }

  void stopLeavesNoCallbackBehind() {
    Run run(3600);
    auto server = serve(run);
    QVERIFY(server);
    run.runner->start(20);
    auto source = std::make_unique<RemoteSource>(server->address());
    source->start();
    QTRY_VERIFY_WITH_TIMEOUT(running(*source), kWaitMs);
    constexpr int kCalls = 50;
    auto replies = std::make_shared<std::atomic<int>>(0);
    for (int i = 0; i < kCalls; ++i)
      source->control()->applyKnobs({{"K", double(i)}}, consoleAuthor(),
                                    [replies](KnobRegistry::Result) { ++*replies; });
    source.reset();  // stop(): every call answered or cancelled, the stream gone
    QCOMPARE(replies->load(), kCalls);
    QTRY_COMPARE_WITH_TIMEOUT(run.hub.subscribers(), std::size_t{0}, kWaitMs);

    // Never started: control calls answer at once.
    RemoteSource idle(server->address());
    const Reply r = applyKnobs(idle, {{"K", 1}});
    QVERIFY(!r.first);
    QVERIFY2(r.second.find("not connected") != std::string::npos, r.second.c_str());

    // Stopping while waiting to reconnect to nothing, then starting again against a live server.
    server->shutdown();
    const int port = server->port();
    server.reset();
    RemoteSource orphan("127.0.0.1:" + std::to_string(port));
    orphan.start();
    QTRY_VERIFY2_WITH_TIMEOUT(orphan.status().state == SourceState::Disconnected, qPrintable(describe(orphan.status())),
                              kWaitMs);
    QVERIFY2(orphan.status().detail.find("reconnecting in") != std::string::npos, orphan.status().detail.c_str());
    orphan.stop();
    QCOMPARE(orphan.status().state, SourceState::Disconnected);
    server = serve(run, "127.0.0.1:" + std::to_string(port));
    QVERIFY(server);
    orphan.start();
    QTRY_VERIFY2_WITH_TIMEOUT(running(orphan), qPrintable(describe(orphan.status())), kWaitMs);
  }
};

QTEST_GUILESS_MAIN(TestRemoteSource)
#include "test_remote_source.moc"
