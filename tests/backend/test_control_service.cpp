// Control over a real gRPC server (KvscopeServer on 127.0.0.1:0) around a real paced simulation,
// called through the generated C++ stubs: knobs, policy, pace, seek, the bearer token, health and
// reflection, and the listen-address rules (the rules as plain functions: test_server_rules.cpp).
// Every refused call must leave the run as it was.
#include <QtTest>

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cmath>
#include <future>
#include <tuple>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "backend/convert/EventConvert.h"
#include "backend/service/BearerToken.h"
#include "backend/service/ControlService.h"
#include "backend/service/KvscopeServer.h"
#include "backend/service/TelemetryHub.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/run/SimulationRunner.h"
#include "core/run/WorkloadFactory.h"
#include "kvscope/v1/control.grpc.pb.h"

using namespace kvscope;

namespace {

constexpr double kPace = 50;  // x real time: e3's hour lasts 72 s, longer than the whole test
const char* kToken = "s3cret-Token_42";

// ServerOptions by position (designated initializers that skip members trip -Wmissing-field-initializers).
ServerOptions options(std::string listen, std::string token_file = {}, std::string cert = {}, std::string key = {},
                      bool insecure = false) {
  ServerOptions o;
  o.listen = std::move(listen);
  o.token_file = std::move(token_file);
  o.tls_cert = std::move(cert);
  o.tls_key = std::move(key);
  o.insecure = insecure;
  return o;
}

std::unique_ptr<grpc::ClientContext> call(const std::string& authorization = {}) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!authorization.empty()) ctx->AddMetadata("authorization", authorization);
  return ctx;
}

std::unique_ptr<v1::Control::Stub> stubFor(
    const std::string& target,
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials(),
    const grpc::ChannelArguments& args = {}) {
  return v1::Control::NewStub(grpc::CreateCustomChannel(target, credentials, args));
}

// "K=0;rho=nan" -> changes (std::stod reads nan and inf).
v1::SetKnobsRequest knobRequest(const QString& text, const std::string& who = {}) {
  v1::SetKnobsRequest request;
  request.set_who(who);
  for (const auto& part : text.split(';', Qt::SkipEmptyParts)) {
    auto* change = request.add_changes();
    change->set_name(part.section('=', 0, 0).toStdString());
    change->set_value(std::stod(part.section('=', 1).toStdString()));
  }
  return request;
}

std::map<std::string, double> knobValues(v1::Control::Stub& stub, const std::string& authorization = {}) {
  v1::GetKnobsResponse response;
  std::map<std::string, double> out;
  if (stub.GetKnobs(call(authorization).get(), {}, &response).ok())
    for (const auto& v : response.values()) out[v.name()] = v.value();
  return out;
}

// Appends the run-control events the subscription received since the last call: (action, speed, who).
using RunControlSeen = std::vector<std::tuple<std::string, double, std::string>>;
void collectRunControl(TelemetryHub::Subscription& sub, RunControlSeen& out) {
  TelemetryItem item;
  while (sub.pop(item)) {
    v1::Event e;
    if (item.gap || !e.ParseFromString(*item.event) || !e.has_run_control()) continue;
    Event core;
    if (fromProto(e, &core, nullptr)) {
      const auto& c = std::get<RunControlChanged>(core.payload);
      out.emplace_back(toString(c.action), c.speed, c.who);
    }
  }
}

QString text(const grpc::Status& s) {
  return QString::number(s.error_code()) + ": " + QString::fromStdString(s.error_message());
}

// A unary call by method name with raw protobuf bytes: Debian ships no health or reflection stubs.
grpc::Status rawCall(const std::string& target, const std::string& method, const std::string& request,
                     std::string* response) {
  grpc::GenericStub generic(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::Slice slice(request);
  grpc::ByteBuffer in(&slice, 1), out;
  std::promise<grpc::Status> done;
  auto ctx = call();
  generic.UnaryCall(ctx.get(), method, grpc::StubOptions(), &in, &out,
                    [&](const grpc::Status& s) { done.set_value(s); });
  const grpc::Status status = done.get_future().get();
  std::vector<grpc::Slice> slices;
  response->clear();
  if (status.ok() && out.Dump(&slices).ok())
    for (const auto& s : slices) response->append(reinterpret_cast<const char*>(s.begin()), s.size());
  return status;
}

// A seekable run that takes no knob changes (as a replay) to check Seek's range rules and the
// refusals; only seeking is real.
struct SeekableRun : RunControl {
  std::atomic<SimTime> time{0};
  std::atomic<int> seeks{0};
  std::atomic<int> changes{0};
  std::string who;  // of the last seek
  void applyKnobs(std::map<std::string, double>, ChangeAuthor,
                  std::function<void(KnobRegistry::Result)> done) override {
    ++changes;
    done({});
  }
  void setPolicy(std::string, ChangeAuthor, Done done) override {
    ++changes;
    done({});
  }
  bool canChangeKnobs() const override { return false; }
  void pause(ChangeAuthor) override {}
  void resume(ChangeAuthor) override {}
  void setSpeed(double, ChangeAuthor) override {}
  bool canSeek() const override { return true; }
  bool seek(SimTime t, ChangeAuthor by, std::string*) override {
    who = std::move(by.who);
    time = t;
    ++seeks;
    return true;
  }
  SimTime endTime() const override { return 1'000'000; }
  bool paused() const override { return false; }
  double speed() const override { return 1; }
  SimTime simTime() const override { return time; }
};

}  // namespace

class TestControlService : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::unique_ptr<TelemetryHub> hub_;
  std::unique_ptr<SimulationRunner> runner_;
  std::unique_ptr<KvscopeServer> server_;
  std::unique_ptr<v1::Control::Stub> stub_;

  std::string writeFile(const QString& name, const QByteArray& content) {
    QFile f(dir_.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(content);
    return f.fileName().toStdString();
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const Scenario s = Scenario::load("e3-load-floor");
    hub_ = std::make_unique<TelemetryHub>();
    runner_ = std::make_unique<SimulationRunner>(s, buildWorkload(s, s.seed), std::vector<EventSink*>{hub_.get()});
    std::string error;
    server_ = KvscopeServer::start(options("127.0.0.1:0"), *hub_, *runner_, &error);
    QVERIFY2(server_, error.c_str());
    QVERIFY(server_->port() > 0);
    QCOMPARE(QString::fromStdString(server_->address()), "127.0.0.1:" + QString::number(server_->port()));
    runner_->start(kPace);
    QTRY_VERIFY_WITH_TIMEOUT(hub_->state().has_run, 10000);
    stub_ = stubFor(server_->address());
  }

  void cleanupTestCase() {
    if (server_) server_->shutdown();
    if (runner_) {
      runner_->stop();
      runner_->waitFinished();
    }
    server_.reset();
    runner_.reset();
    hub_.reset();
  }

  void getKnobsListsEveryKnobWithItsRange() {
    v1::GetKnobsResponse r;
    const auto status = stub_->GetKnobs(call().get(), {}, &r);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    const auto specs = KnobRegistry::specs();
    QCOMPARE(r.specs_size(), int(specs.size()));
    QCOMPARE(r.values_size(), int(specs.size()));
    for (int i = 0; i < r.specs_size(); ++i) {
      QCOMPARE(r.specs(i).name(), std::string(specs[i].name));
      QCOMPARE(r.specs(i).min(), specs[i].min);
      QCOMPARE(r.specs(i).max(), specs[i].max);
      QCOMPARE(r.specs(i).integer(), specs[i].integer);
      QCOMPARE(r.values(i).name(), std::string(specs[i].name));
    }
    QCOMPARE(knobValues(*stub_).at("K"), 200.0);  // the scenario's value, not the default 0
    QCOMPARE(r.policies_size(), int(policyNames().size()));
    QCOMPARE(r.policy(), std::string("kv-aware"));
  }

  void setKnobsAppliesAndSaysWho() {
    auto sub = hub_->subscribe(hub_->state().last_seq + 1, {"knob"}, [] {});
    v1::SetKnobsResponse r;
    auto status = stub_->SetKnobs(call().get(), knobRequest("K=0", "test-console"), &r);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QCOMPARE(r.applied_size(), 1);
    QCOMPARE(r.applied(0).name(), std::string("K"));
    QCOMPARE(r.applied(0).old_value(), 200.0);
    QCOMPARE(r.applied(0).new_value(), 0.0);
    QCOMPARE(r.applied(0).who(), std::string("test-console"));
    QCOMPARE(knobValues(*stub_).at("K"), 0.0);
    QCOMPARE(hub_->state().knobs.at("K"), 0.0);

    bool seen = false;  // the change is in the telemetry stream, with its author
    QTRY_VERIFY_WITH_TIMEOUT(([&] {
                               TelemetryItem item;
                               while (sub->pop(item)) {
                                 v1::Event e;
                                 if (!item.gap && e.ParseFromString(*item.event) && e.has_knob())
                                   seen |= e.knob().name() == "K" && e.knob().new_value() == 0 &&
                                           e.knob().who() == "test-console";
                               }
                               return seen;
                             }()),
                             5000);
    sub->close();

    // Without a label the peer's address is the author.
    status = stub_->SetKnobs(call().get(), knobRequest("sticky_bonus=150"), &r);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QCOMPARE(r.applied_size(), 1);
    QVERIFY2(r.applied(0).who().rfind("grpc:127.0.0.1:", 0) == 0, r.applied(0).who().c_str());
  }

  void badKnobChangesAreRefusedAndChangeNothing_data() {
    QTest::addColumn<QString>("changes");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("valid");
    QTest::newRow("unknown knob") << "no_such_knob=1"
                                  << "changes[0]: unknown knob 'no_such_knob'"
                                  << "valid knobs: K, ";
    QTest::newRow("out of range") << "K=20000"
                                  << "changes[0]: knob 'K'"
                                  << "[0, 10000]";
    QTest::newRow("below minimum") << "seed_min_turn_id=0"
                                   << "knob 'seed_min_turn_id'"
                                   << "[1, 1000]";
    QTest::newRow("rho NaN") << "rho=nan"
                             << "knob 'rho'"
                             << "[0.1, 1]";
    QTest::newRow("infinite") << "throughput=inf"
                              << "knob 'throughput'"
                              << "[1, 1e+08]";
    QTest::newRow("integer knob 2.5") << "pending_seed_budget=2.5"
                                      << "knob 'pending_seed_budget'"
                                      << "whole number";
    QTest::newRow("empty list") << ""
                                << "changes: empty"
                                << "valid knobs";
    QTest::newRow("all or nothing") << "K=50;rho=7"
                                    << "changes[1]: knob 'rho'"
                                    << "[0.1, 1]";
    QTest::newRow("twice") << "K=5;K=6"
                           << "changes[1].name: knob 'K'"
                           << "more than once";
  }

  void badKnobChangesAreRefusedAndChangeNothing() {
    QFETCH(QString, changes);
    QFETCH(QString, field);
    QFETCH(QString, valid);
    const auto before = knobValues(*stub_);
    QCOMPARE(before.at("K"), 0.0);
    v1::SetKnobsResponse r;
    const auto status = stub_->SetKnobs(call().get(), knobRequest(changes), &r);
    QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    const QString message = QString::fromStdString(status.error_message());
    QVERIFY2(message.contains(field), qPrintable(message));
    QVERIFY2(message.contains(valid), qPrintable(message));
    QVERIFY(knobValues(*stub_) == before);
    QCOMPARE(hub_->state().knobs.at("K"), 0.0);
  }

  void setPolicy() {
    v1::SetPolicyRequest request;
    v1::SetPolicyResponse r;
    request.set_policy("no-such-policy");
    auto status = stub_->SetPolicy(call().get(), request, &r);
    QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    QVERIFY2(status.error_message().find("no-such-policy") != std::string::npos, status.error_message().c_str());
    QVERIFY2(status.error_message().find("exclusive-overlap") != std::string::npos, status.error_message().c_str());
    QCOMPARE(hub_->state().policy, std::string("kv-aware"));

    request.set_policy("exclusive-overlap");
    request.set_who("test-console");
    status = stub_->SetPolicy(call().get(), request, &r);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QVERIFY(r.has_applied());
    QCOMPARE(r.applied().old_policy(), std::string("kv-aware"));
    QCOMPARE(r.applied().new_policy(), std::string("exclusive-overlap"));
    QCOMPARE(hub_->state().policy, std::string("exclusive-overlap"));
    r.Clear();
    status = stub_->SetPolicy(call().get(), request, &r);  // already selected: OK, nothing applied
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QVERIFY(!r.has_applied());
    request.set_policy("kv-aware");
    QVERIFY(stub_->SetPolicy(call().get(), request, &r).ok());
  }

  void seekIsForRecordingsWithinTheirRange() {
    v1::SeekRequest request;
    request.set_time_us(1'000'000);
    v1::SeekResponse r;
    const auto status = stub_->Seek(call().get(), request, &r);
    QCOMPARE(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    QVERIFY2(status.error_message().find("recordings") != std::string::npos, status.error_message().c_str());

    SeekableRun replay;
    TelemetryHub hub;
    std::string error;
    auto server = KvscopeServer::start(options("127.0.0.1:0"), hub, replay, &error);
    QVERIFY2(server, error.c_str());
    auto stub = stubFor(server->address());
    for (const SimTime outside : {SimTime{-1}, SimTime{1'000'001}}) {
      request.set_time_us(outside);
      const auto refused = stub->Seek(call().get(), request, &r);
      QCOMPARE(refused.error_code(), grpc::StatusCode::OUT_OF_RANGE);
      QVERIFY2(refused.error_message().find("[0, 1000000]") != std::string::npos, refused.error_message().c_str());
    }
    QCOMPARE(replay.seeks.load(), 0);  // refused before reaching the run
    request.set_time_us(250'000);
    request.set_who("scrubber");
    QVERIFY(stub->Seek(call().get(), request, &r).ok());
    QCOMPARE(r.time_us(), SimTime{250'000});
    QCOMPARE(replay.seeks.load(), 1);
    QCOMPARE(replay.who, std::string("scrubber"));

    // A recording cannot change what happened: knob and policy changes are refused before the run.
    v1::SetKnobsResponse knobs;
    const auto knob_status = stub->SetKnobs(call().get(), knobRequest("K=0"), &knobs);
    QCOMPARE(knob_status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    QVERIFY2(knob_status.error_message().find("replays a recording") != std::string::npos,
             knob_status.error_message().c_str());
    v1::SetPolicyRequest policy;
    policy.set_policy("linear");
    v1::SetPolicyResponse policy_response;
    QCOMPARE(stub->SetPolicy(call().get(), policy, &policy_response).error_code(),
             grpc::StatusCode::FAILED_PRECONDITION);
    QCOMPARE(replay.changes.load(), 0);
  }

  void runMarkersAreForLiveSessions() {
    // A simulation is one run: its markers would split nothing the lab restarts.
    v1::MarkRunRequest request;
    request.set_action(v1::RUN_MARK_ACTION_START);
    request.set_name("k200");
    v1::MarkRunResponse r;
    const auto status = stub_->MarkRun(call().get(), request, &r);
    QCOMPARE(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    QVERIFY2(status.error_message().find("live session") != std::string::npos, status.error_message().c_str());
    QCOMPARE(r.applied_size(), 0);
  }

  void pauseAndResume() {
    auto sub = hub_->subscribe(hub_->state().last_seq + 1, {"run_control"}, [] {});
    v1::PauseRequest pause;
    pause.set_who("test-console");
    v1::PauseResponse paused;
    auto status = stub_->Pause(call().get(), pause, &paused);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QVERIFY(runner_->paused());
    QVERIFY(stub_->Pause(call().get(), pause, &paused).ok());  // already paused: no second event
    const SimTime t = runner_->simTime();
    QCOMPARE(paused.sim_time_us(), t);
    QTest::qWait(150);
    QCOMPARE(runner_->simTime(), t);  // nothing runs while paused
    v1::ResumeResponse resumed;
    status = stub_->Resume(call().get(), {}, &resumed);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QTRY_VERIFY_WITH_TIMEOUT(!runner_->paused(), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(runner_->simTime() > t, 5000);

    // Both changes are in the telemetry stream, once each, with their authors (the peer's address
    // when the request names none).
    RunControlSeen seen;
    QTRY_VERIFY_WITH_TIMEOUT((collectRunControl(*sub, seen), !seen.empty() && std::get<0>(seen.back()) == "resumed"),
                             5000);
    sub->close();
    QCOMPARE(seen.size(), std::size_t{2});
    QCOMPARE(std::get<0>(seen[0]), std::string("paused"));
    QCOMPARE(std::get<1>(seen[0]), kPace);
    QCOMPARE(std::get<2>(seen[0]), std::string("test-console"));
    QCOMPARE(std::get<0>(seen[1]), std::string("resumed"));
    QVERIFY2(std::get<2>(seen[1]).rfind("grpc:127.0.0.1:", 0) == 0, std::get<2>(seen[1]).c_str());
  }

  void setSpeed() {
    v1::SetSpeedRequest request;
    v1::SetSpeedResponse r;
    for (double bad : {-1.0, 10001.0, std::nan(""), HUGE_VAL}) {
      request.set_speed(bad);
      const auto status = stub_->SetSpeed(call().get(), request, &r);
      QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      QVERIFY2(status.error_message().find("[0, 10000]") != std::string::npos, status.error_message().c_str());
      QCOMPARE(runner_->speed(), kPace);
    }
    auto sub = hub_->subscribe(hub_->state().last_seq + 1, {"run_control"}, [] {});
    request.set_speed(100);
    request.set_who("pacer");
    QVERIFY(stub_->SetSpeed(call().get(), request, &r).ok());
    QCOMPARE(r.speed(), 100.0);
    QCOMPARE(runner_->speed(), 100.0);
    QVERIFY(stub_->SetSpeed(call().get(), request, &r).ok());  // unchanged: no event
    request.set_speed(kPace);
    QVERIFY(stub_->SetSpeed(call().get(), request, &r).ok());
    RunControlSeen seen;
    QTRY_VERIFY_WITH_TIMEOUT((collectRunControl(*sub, seen), !seen.empty() && std::get<1>(seen.back()) == kPace), 5000);
    sub->close();
    QCOMPARE(seen.size(), std::size_t{2});  // the repeated 100x added none
    for (const auto& [action, speed, who] : seen) {
      QCOMPARE(action, std::string("speed"));
      QCOMPARE(who, std::string("pacer"));
    }
    QCOMPARE(std::get<1>(seen[0]), 100.0);
  }

  void tokenGuardsEveryControlCall() {
    std::string error;
    // The token rule alone: 21 wrong calls in a row would otherwise lock this address out
    // (test_call_authorization checks that).
    ServerOptions o = options("127.0.0.1:0", writeFile("token", QByteArray("  ") + kToken + "\n"));
    o.auth_throttle.free_failures = 1000;
    auto guarded = KvscopeServer::start(o, *hub_, *runner_, &error);
    QVERIFY2(guarded, error.c_str());
    auto stub = stubFor(guarded->address());
    const std::string right = std::string("Bearer ") + kToken;
    for (const std::string& wrong :
         std::vector<std::string>{"", "Bearer wrong", "Bearer s3cret-Token_4", "Bearer s3cret-Token_421",
                                  "Basic s3cret-Token_42", kToken, "Bearer  s3cret-Token_42"}) {
      v1::SetKnobsResponse r;
      auto status = stub->SetKnobs(call(wrong).get(), knobRequest("K=77"), &r);
      QCOMPARE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
      QVERIFY(status.error_message().find(kToken) == std::string::npos);  // never echoed
      v1::GetKnobsResponse knobs;
      QCOMPARE(stub->GetKnobs(call(wrong).get(), {}, &knobs).error_code(), grpc::StatusCode::UNAUTHENTICATED);
      v1::PauseResponse paused;
      QCOMPARE(stub->Pause(call(wrong).get(), {}, &paused).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    }
    QCOMPARE(hub_->state().knobs.at("K"), 0.0);
    QVERIFY(!runner_->paused());
    QCOMPARE(knobValues(*stub, right).at("K"), 0.0);
    QCOMPARE(knobValues(*stub, "bearer " + std::string(kToken)).size(),
             KnobRegistry::specs().size());  // scheme is case-insensitive
    v1::SetKnobsResponse r;
    QVERIFY(stub->SetKnobs(call(right).get(), knobRequest("K=0"), &r).ok());
    guarded->shutdown();
  }

  void healthAndReflection() {
    std::string response;
    // grpc.health.v1.HealthCheckRequest{service: ""} is empty; the response is {status: SERVING (1)}.
    auto status = rawCall(server_->address(), "/grpc.health.v1.Health/Check", "", &response);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QCOMPARE(response, std::string("\x08\x01", 2));
    const std::string control = v1::Control::service_full_name();
    status = rawCall(server_->address(), "/grpc.health.v1.Health/Check",
                     std::string("\x0a", 1) + char(control.size()) + control, &response);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QCOMPARE(response, std::string("\x08\x01", 2));
    // ServerReflectionRequest{list_services: ""} (field 7) as one message of the bidi stream.
    status = rawCall(server_->address(), "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                     std::string("\x3a\x00", 2), &response);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QVERIFY(response.find("kvscope.v1.Control") != std::string::npos);
    QVERIFY(response.find("kvscope.v1.Telemetry") != std::string::npos);
  }

  void nonLoopbackNeedsTokenOrInsecure() {
    // Binding 0.0.0.0 is local to this machine; no traffic is sent to a non-loopback address.
    for (const std::string listen : {"0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:50051"}) {
      std::string error;
      QVERIFY(!KvscopeServer::start(options(listen), *hub_, *runner_, &error));
      QVERIFY2(error.find("'" + listen + "' without a token") != std::string::npos, error.c_str());
      QVERIFY2(error.find("--token-file") != std::string::npos && error.find("--insecure") != std::string::npos,
               error.c_str());
    }
    std::string error;
    auto open = KvscopeServer::start(options("0.0.0.0:0", {}, {}, {}, true), *hub_, *runner_, &error);
    QVERIFY2(open, error.c_str());
    QVERIFY(open->port() > 0);
    open->shutdown();
    auto guarded = KvscopeServer::start(options("0.0.0.0:0", writeFile("t2", kToken)), *hub_, *runner_, &error);
    QVERIFY2(guarded, error.c_str());
  }

  void badOptionsNameTheOptionOrFile() {
    const auto fails = [&](const ServerOptions& o, const std::string& expected) {
      std::string error;
      const bool started = KvscopeServer::start(o, *hub_, *runner_, &error) != nullptr;
      if (started || error.find(expected) == std::string::npos)
        qWarning("expected an error with '%s', got: %s", expected.c_str(), started ? "(started)" : error.c_str());
      return !started && error.find(expected) != std::string::npos;
    };
    const std::string missing = dir_.filePath("missing.pem").toStdString();
    QVERIFY(fails(options("127.0.0.1:0", {}, missing), "without --tls-key"));
    QVERIFY(fails(options("127.0.0.1:0", {}, {}, missing), "without --tls-cert"));
    QVERIFY(fails(options("127.0.0.1:0", {}, missing, missing), "--tls-cert '" + missing + "'"));
    const std::string junk = writeFile("junk.pem", "not a certificate");
    QVERIFY(fails(options("127.0.0.1:0", {}, junk, junk), "--tls-cert '" + junk + "': not a PEM"));
    QVERIFY(fails(options("127.0.0.1:0", missing), "token file '" + missing + "': cannot open"));
    const std::string empty = writeFile("empty-token", " \n\t\n");
    QVERIFY(fails(options("127.0.0.1:0", empty), "token file '" + empty + "': is empty"));
    const std::string spaced = writeFile("spaced-token", "two words\n");
    QVERIFY(fails(options("127.0.0.1:0", spaced), "printable ASCII"));
    const std::string short_token = writeFile("short-token", "x\n");  // a token one can guess
    QVERIFY(fails(options("127.0.0.1:0", short_token), "shorter than 12 characters"));
    QVERIFY(fails(options("nonsense"), "expected HOST:PORT"));
    QVERIFY(fails(options("::1:50051"), "brackets"));
    QVERIFY(fails(options("127.0.0.1:99999"), "0..65535"));
    // The port is taken by the main server (and SO_REUSEPORT is off, so it cannot be shared).
    QVERIFY(fails(options(server_->address()), "in use"));
  }

  void tlsServesOnlyTls() {
    const QString openssl = QStandardPaths::findExecutable("openssl");
    QVERIFY2(!openssl.isEmpty(), "openssl is missing (scripts/deps.sh installs it): it makes the test certificate");
    const QString cert = dir_.filePath("cert.pem"), key = dir_.filePath("key.pem");
    QProcess p;
    p.start(openssl,
            {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    std::string error;
    auto tls = KvscopeServer::start(options("127.0.0.1:0", {}, cert.toStdString(), key.toStdString()), *hub_, *runner_,
                                    &error);
    QVERIFY2(tls, error.c_str());
    QVERIFY(tls->tls());
    QFile pem(cert);
    QVERIFY(pem.open(QIODevice::ReadOnly));
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    grpc::SslCredentialsOptions trust;
    trust.pem_root_certs = pem.readAll().toStdString();
    auto secure = stubFor(tls->address(), grpc::SslCredentials(trust), args);
    QCOMPARE(knobValues(*secure).size(), KnobRegistry::specs().size());
    auto plain = stubFor(tls->address());
    v1::GetKnobsResponse r;
    QVERIFY(!plain->GetKnobs(call().get(), {}, &r).ok());
    tls->shutdown();
  }

  void unixSocketIsLocal() {
    const std::string listen = "unix:" + dir_.filePath("kvscope.sock").toStdString();
    std::string error;
    auto local = KvscopeServer::start(options(listen), *hub_, *runner_, &error);
    QVERIFY2(local, error.c_str());
    QCOMPARE(local->address(), listen);
    QCOMPARE(knobValues(*stubFor(listen)).at("K"), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestControlService)
#include "test_control_service.moc"
