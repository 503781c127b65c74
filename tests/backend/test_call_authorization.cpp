// The bearer token's guard over a real server (KvscopeServer around a LiveRouter, so Control, Router
// and Telemetry are all served) called by real generated clients :
//  - an address that keeps sending a wrong token is locked out, on every service, whatever token it
//    sends, for a time that grows; the right token works again once the stated time has passed;
//  - every operator change carries where the call came from (peer, "token"/"open") beside the label
//    the caller chose, in the telemetry stream, its JSON and the server's log.
// The throttle's clock is the test's own, so nothing here depends on how fast the machine is.
#include <QtTest>

#include <QTemporaryDir>

#include <atomic>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include <nlohmann/json.hpp>
#include "backend/convert/EventConvert.h"

#include "backend/service/AuthFailureThrottle.h"
#include "backend/service/KvscopeServer.h"
#include "backend/service/TelemetryHub.h"
#include "core/events/EventJson.h"
#include "core/run/LiveRouter.h"
#include "kvscope/v1/control.grpc.pb.h"
#include "kvscope/v1/router.grpc.pb.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

using namespace kvscope;
using Clock = AuthFailureThrottle::Clock;

namespace {

const char* kToken = "s3cret-Token_42";
const std::string kRight = std::string("Bearer ") + kToken;
const std::string kWrong = "Bearer s3cret-Token_43";

std::unique_ptr<grpc::ClientContext> call(const std::string& authorization) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!authorization.empty()) ctx->AddMetadata("authorization", authorization);
  return ctx;
}

v1::SetKnobsRequest setK(double value, const std::string& who = {}) {
  v1::SetKnobsRequest request;
  auto* change = request.add_changes();
  change->set_name("K");
  change->set_value(value);
  request.set_who(who);
  return request;
}

QString text(const grpc::Status& s) {
  return QString::number(s.error_code()) + ": " + QString::fromStdString(s.error_message());
}

// A server around a real LiveRouter (two decode workers), its hub, the throttle's clock and its log.
struct Served {
  std::atomic<std::int64_t> clock_ns{0};
  std::mutex log_mutex;
  std::vector<std::string> log;
  TelemetryHub hub;
  std::unique_ptr<LiveRouter> router;
  std::unique_ptr<KvscopeServer> server;
  std::shared_ptr<grpc::Channel> channel;

  bool start(const std::string& token_file, std::string* error) {
    LiveClusterSpec spec;
    spec.workers = {WorkerInfo{"D0", WorkerRole::Decode, 850000}, WorkerInfo{"D1", WorkerRole::Decode, 850000}};
    router = std::make_unique<LiveRouter>(spec, std::vector<EventSink*>{&hub});
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.token_file = token_file;
    const Clock::time_point base = Clock::now();
    o.auth_throttle.now = [this, base] { return base + std::chrono::nanoseconds(clock_ns.load()); };
    o.log = [this](const std::string& line) {
      std::lock_guard lock(log_mutex);
      log.push_back(line);
    };
    server = KvscopeServer::start(o, hub, *router, error, router.get());
    if (server) channel = grpc::CreateChannel(server->address(), grpc::InsecureChannelCredentials());
    return server != nullptr;
  }
  void advance(std::chrono::milliseconds by) { clock_ns += std::chrono::nanoseconds(by).count(); }
  std::vector<std::string> logLines() {
    std::lock_guard lock(log_mutex);
    return log;
  }
  ~Served() {
    if (server) server->shutdown();
    server.reset();
    if (router) router->stop();
  }
};

// The core events of the kinds given that the subscription received so far.
std::vector<Event> drain(TelemetryHub::Subscription& sub) {
  std::vector<Event> out;
  TelemetryItem item;
  while (sub.pop(item)) {
    v1::Event wire;
    Event e;
    if (!item.gap && wire.ParseFromString(*item.event) && fromProto(wire, &e, nullptr)) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

class TestCallAuthorization : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  std::string tokenFile() {
    const QString path = dir_.filePath("token");
    QFile f(path);
    if (!f.exists() && f.open(QIODevice::WriteOnly)) f.write(QByteArray(kToken) + "\n");
    return path.toStdString();
  }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void repeatedFailuresLockTheAddressOut() {
    Served s;
    std::string error;
    QVERIFY2(s.start(tokenFile(), &error), error.c_str());
    auto control = v1::Control::NewStub(s.channel);
    // 200 guesses on a clock that does not move: the first ten are free, the eleventh starts a 1 s
    // lockout, and the rest are refused at once.
    int unauthenticated = 0, refused = 0;
    std::string refusal;
    for (int i = 0; i < 200; ++i) {
      v1::SetKnobsResponse r;
      const auto status = control->SetKnobs(call(kWrong).get(), setK(77), &r);
      if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) ++unauthenticated;
      if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) ++refused, refusal = status.error_message();
    }
    QCOMPARE(unauthenticated, 11);
    QCOMPARE(refused, 189);
    QVERIFY2(refusal.find("from loopback") != std::string::npos, refusal.c_str());  // the host, not a port
    QVERIFY2(refusal.find("refused for 1 s more (the right one always passes") != std::string::npos, refusal.c_str());
    QVERIFY(refusal.find(kToken) == std::string::npos);

    // The right token passes during the lockout: a guesser on the router's host cannot lock it out.
    v1::SetKnobsResponse r;
    auto status = control->SetKnobs(call(kRight).get(), setK(77), &r);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QCOMPARE(s.router->knobState().knobs.front().second, 77.0);

    // A success does not reset the count (it would let a guesser on the same host start afresh):
    // once the second has passed, the next failure locks out for 2 s at once.
    s.advance(std::chrono::milliseconds(1000));
    QCOMPARE(control->SetKnobs(call(kWrong).get(), setK(1), &r).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    status = control->SetKnobs(call(kWrong).get(), setK(1), &r);
    QCOMPARE(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    QVERIFY2(status.error_message().find("refused for 2 s more") != std::string::npos, status.error_message().c_str());
    QVERIFY(control->SetKnobs(call(kRight).get(), setK(5), &r).ok());
    s.advance(std::chrono::milliseconds(2000));
    QCOMPARE(control->SetKnobs(call(kWrong).get(), setK(1), &r).error_code(), grpc::StatusCode::UNAUTHENTICATED);

    // Each lockout is one line in the server's log, naming the address, never the token.
    int lockouts = 0;
    for (const auto& line : s.logLines())
      if (line.find("refusing every call from there") != std::string::npos) {
        ++lockouts;
        QVERIFY2(line.find("loopback") != std::string::npos && line.find(kToken) == std::string::npos, line.c_str());
      }
    QCOMPARE(lockouts, 3);  // 1 s, 2 s, 4 s
  }

  void aLockoutCoversEveryService() {
    Served s;
    std::string error;
    QVERIFY2(s.start(tokenFile(), &error), error.c_str());
    // Guesses spread over services count as one address's failures.
    auto control = v1::Control::NewStub(s.channel);
    auto telemetry = v1::Telemetry::NewStub(s.channel);
    auto router = v1::Router::NewStub(s.channel);
    for (int i = 0; i < 4; ++i) {
      v1::GetKnobsResponse knobs;
      QCOMPARE(control->GetKnobs(call(kWrong).get(), {}, &knobs).error_code(), grpc::StatusCode::UNAUTHENTICATED);
      v1::State state;
      QCOMPARE(telemetry->GetState(call(kWrong).get(), {}, &state).error_code(), grpc::StatusCode::UNAUTHENTICATED);
      if (i == 3) break;  // the eleventh failure: locked out from the next call on
      v1::Cluster cluster;
      QCOMPARE(router->GetCluster(call("").get(), {}, &cluster).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    }
    // A wrong token is now refused by each service, streams included; the right one passes in each.
    v1::GetKnobsResponse knobs;
    QCOMPARE(control->GetKnobs(call(kWrong).get(), {}, &knobs).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    QVERIFY(control->GetKnobs(call(kRight).get(), {}, &knobs).ok());
    v1::State state;
    QCOMPARE(telemetry->GetState(call(kWrong).get(), {}, &state).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    QVERIFY(telemetry->GetState(call(kRight).get(), {}, &state).ok());
    for (const std::string& token : {kWrong, kRight}) {
      auto ctx = call(token);
      v1::ReportSummary summary;
      auto writer = router->Report(ctx.get(), &summary);
      writer->WritesDone();
      QCOMPARE(writer->Finish().error_code(),
               token == kRight ? grpc::StatusCode::OK : grpc::StatusCode::RESOURCE_EXHAUSTED);
    }
    {
      auto ctx = call(kWrong);
      auto reader = telemetry->Subscribe(ctx.get(), v1::SubscribeRequest());
      v1::TelemetryMessage message;
      QVERIFY(!reader->Read(&message));
      QCOMPARE(reader->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    }
  }

  void memoryIsBoundedAndALockoutOutlivesAFlood() {
    std::int64_t now_ns = 0;
    AuthFailureThrottle::Policy policy;
    policy.free_failures = 2;
    policy.max_peers = 8;
    policy.now = [&] { return Clock::time_point(std::chrono::nanoseconds(now_ns)); };
    AuthFailureThrottle throttle(policy);
    throttle.failed("ipv4:10.0.0.1:5000");
    throttle.failed("ipv4:10.0.0.1:5001");
    QCOMPARE(throttle.lockedFor("ipv4:10.0.0.1:5002"), Clock::duration::zero());  // two are free
    QCOMPARE(throttle.failed("ipv4:10.0.0.1:5002"), Clock::duration(std::chrono::seconds(1)));
    // A flood of other addresses, each failing once, never grows the table past its bound, and
    // never pushes out the one locked out.
    for (int i = 0; i < 10000; ++i) {
      throttle.failed("ipv4:10.1." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ":1");
      QVERIFY(throttle.trackedPeers() <= 8);
    }
    QVERIFY(throttle.lockedFor("ipv4:10.0.0.1:6000") > Clock::duration::zero());
    // Were every tracked address locked out, the one that failed longest ago would go: still bounded.
    for (int i = 0; i < 100; ++i)
      for (int n = 0; n < 3; ++n) throttle.failed("ipv4:10.2.0." + std::to_string(i) + ":1");
    QCOMPARE(throttle.trackedPeers(), std::size_t{8});
  }

  // Rotating the source address does not escape: every loopback address is one host, and all
  // hosts together have a budget of failures per minute, refilled as time passes.
  void rotatingAddressesMeetTheGlobalBudget() {
    std::int64_t now_ns = 0;
    AuthFailureThrottle::Policy policy;
    policy.global_failures_per_minute = 50;
    policy.max_peers = 100000;
    policy.now = [&] { return Clock::time_point(std::chrono::nanoseconds(now_ns)); };
    AuthFailureThrottle throttle(policy);
    for (int i = 0; i < 11; ++i) throttle.failed("ipv4:127.0." + std::to_string(i) + ".1:4000");
    QVERIFY(throttle.lockedFor("ipv4:127.99.0.1:1") > Clock::duration::zero());  // eleven from one host
    QVERIFY(throttle.lockedFor("ipv6:[::1]:1") > Clock::duration::zero());
    for (int i = 0; i < 39; ++i) throttle.failed("ipv4:10.3." + std::to_string(i) + ".1:1");  // 50 in all
    QVERIFY(throttle.lockedFor("ipv4:10.9.9.9:1") > Clock::duration::zero());  // a fresh address: over budget
    now_ns += 1'200'000'000;                                                   // 60 s / 50 = 1.2 s refills one failure
    QCOMPARE(throttle.lockedFor("ipv4:10.9.9.9:1"), Clock::duration::zero());
  }

  void peersAreCountedByHost_data() {
    QTest::addColumn<QString>("peer");
    QTest::addColumn<QString>("key");
    QTest::newRow("ipv4") << "ipv4:10.0.0.1:53012"
                          << "10.0.0.1";
    QTest::newRow("ipv4 loopback") << "ipv4:127.0.0.1:53012"
                                   << "loopback";
    QTest::newRow("another loopback") << "ipv4:127.42.7.9:1"
                                      << "loopback";
    QTest::newRow("ipv6 loopback") << "ipv6:[::1]:5000"
                                   << "loopback";
    QTest::newRow("mapped loopback") << "ipv6:[::ffff:127.0.0.2]:5000"
                                     << "loopback";
    QTest::newRow("ipv6 /64") << "ipv6:[2001:db8:1:2:aaaa::9]:5000"
                              << "2001:db8:1:2::/64";
    QTest::newRow("same /64") << "ipv6:[2001:db8:1:2:bbbb::1]:6000"
                              << "2001:db8:1:2::/64";
    QTest::newRow("ipv4-mapped") << "ipv6:[::ffff:10.1.2.3]:7"
                                 << "10.1.2.3";
    QTest::newRow("unix") << "unix:/run/kvscope.sock"
                          << "unix";
    QTest::newRow("unix abstract") << "unix-abstract:kv"
                                   << "unix";
  }

  void peersAreCountedByHost() {
    QFETCH(QString, peer);
    QFETCH(QString, key);
    QCOMPARE(QString::fromStdString(AuthFailureThrottle::peerKey(peer.toStdString())), key);
  }

  void changesRecordTheirOrigin_data() {
    QTest::addColumn<bool>("token");
    QTest::newRow("token") << true;
    QTest::newRow("open") << false;
  }

  // Anyone may call themselves "console"; the events say who really did it.
  void changesRecordTheirOrigin() {
    QFETCH(bool, token);
    Served s;
    std::string error;
    QVERIFY2(s.start(token ? tokenFile() : std::string(), &error), error.c_str());
    const std::string auth = token ? kRight : std::string();
    const std::string identity = token ? "token" : "open";
    auto sub = s.hub.subscribe(s.hub.state().last_seq + 1, {"knob", "policy", "run_mark"}, [] {});
    auto control = v1::Control::NewStub(s.channel);

    v1::SetKnobsResponse knobs;
    auto status = control->SetKnobs(call(auth).get(), setK(150, "console"), &knobs);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    v1::SetPolicyRequest policy;
    policy.set_policy("linear");
    policy.set_who("console\x1b[2J");  // a label cannot clear the operator's terminal either
    v1::SetPolicyResponse policy_response;
    status = control->SetPolicy(call(auth).get(), policy, &policy_response);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    v1::MarkRunRequest mark;
    mark.set_action(v1::RUN_MARK_ACTION_START);
    mark.set_name("k150");
    mark.set_who("console (from 10.9.9.9, token)");  // a forged origin in the label stays in the label
    v1::MarkRunResponse mark_response;
    status = control->MarkRun(call(auth).get(), mark, &mark_response);
    QVERIFY2(status.ok(), qPrintable(text(status)));

    std::vector<Event> events;
    const auto collect = [&] {
      for (auto& e : drain(*sub)) events.push_back(std::move(e));
      return events.size();
    };
    QTRY_VERIFY_WITH_TIMEOUT(collect() >= 3, 5000);
    sub->close();
    QCOMPARE(events.size(), std::size_t{3});
    const auto* k = std::get_if<KnobChanged>(&events[0].payload);
    const auto* p = std::get_if<PolicyChanged>(&events[1].payload);
    const auto* m = std::get_if<RunMarked>(&events[2].payload);
    QVERIFY(k && p && m);
    QCOMPARE(k->who, std::string("console"));
    QCOMPARE(p->who, std::string("console?[2J"));
    QCOMPARE(m->who, std::string("console (from 10.9.9.9, token)"));
    for (const ChangeOrigin* origin : {&k->origin, &p->origin, &m->origin}) {
      QVERIFY2(origin->peer.rfind("127.0.0.1:", 0) == 0, origin->peer.c_str());
      QVERIFY(origin->peer.size() > std::string("127.0.0.1:").size());
      QCOMPARE(origin->identity, identity);
    }
    // The same origin in what exports and `tail --format json` print.
    const auto json = eventToJson(events[0]);
    QCOMPARE(json.at("origin").at("peer").get<std::string>(), k->origin.peer);
    QCOMPARE(json.at("origin").at("identity").get<std::string>(), identity);

    // And in the server's log, one line per change with the label and where it came from.
    std::vector<std::string> lines;
    for (const auto& line : s.logLines())
      if (line.rfind("control: ", 0) == 0) lines.push_back(line);
    QCOMPARE(lines.size(), std::size_t{3});
    QVERIFY2(lines[0].find("SetKnobs K=150 by 'console' from " + k->origin.peer + " (" + identity + ")") !=
                 std::string::npos,
             lines[0].c_str());
    QVERIFY2(lines[1].find("SetPolicy linear by 'console?[2J' from 127.0.0.1:") != std::string::npos, lines[1].c_str());
    QVERIFY2(lines[2].find("MarkRun start 'k150'") != std::string::npos, lines[2].c_str());
  }
};

QTEST_GUILESS_MAIN(TestCallAuthorization)
#include "test_call_authorization.moc"
