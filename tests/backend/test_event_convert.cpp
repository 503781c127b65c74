// Proto <-> core conversion (backend/convert/): every event kind, with a non-default value in every
// field, survives core -> proto -> bytes -> proto -> core unchanged (its JSON form is equal); bad
// messages are refused with a message naming the field; random and mutated bytes never crash it.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/stubs/logging.h>
#include <nlohmann/json.hpp>

#include "backend/convert/EventConvert.h"
#include "core/events/EventJson.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/sim/NewTokenRatio.h"

using namespace kvscope;
namespace pb = google::protobuf;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

struct Sample {
  std::string name;
  Event event;
  bool every_field = false;  // every proto field of the payload is non-default (checked by reflection)
};

Event ev(std::uint64_t seq, SimTime t, EventPayload p) { return Event{seq, t, std::move(p)}; }

CandidateScore candidate(WorkerId w, double score, bool eligible, std::vector<std::pair<const char*, double>> comps) {
  CandidateScore c;
  c.worker = w;
  c.score = score;
  c.eligible = eligible;
  for (const auto& [n, v] : comps) c.add(n, v);
  return c;
}

// One fully populated sample per kind (every field non-default), then edge cases and every enum value.
std::vector<Sample> makeSamples() {
  std::vector<Sample> s;
  auto full = [&](std::string name, EventPayload p) {
    s.push_back(
        {std::move(name), ev(1000 + s.size(), 123'456'789 + static_cast<SimTime>(s.size()), std::move(p)), true});
  };
  auto edge = [&](std::string name, Event e) { s.push_back({std::move(name), std::move(e), false}); };

  full("run_started", RunStarted{"e3-load-floor",
                                 "kv-aware",
                                 424242,
                                 "h20",
                                 {{"D0", WorkerRole::Decode, 1'000'000}, {"I1", WorkerRole::Unified, 900'000}},
                                 {{"P0", WorkerRole::Prefill, 2'000'000}, {"P1", WorkerRole::Prefill, 1'500'000}},
                                 0.9,
                                 {{"K", 200}, {"rho", 0.9}, {"pending_seed_budget", 4}},
                                 "tracets",
                                 1285,
                                 2912.5});
  full("route", RouteDecision{9'000'000'001,
                              77,
                              3,
                              "kv-aware",
                              2,
                              true,
                              {candidate(2, 1234.5, true,
                                         {{"prefix", 0.5},
                                          {"load", -3.25},
                                          {"load_floor", 200},
                                          {"sticky", 100},
                                          {"tokens", 1e12},
                                          {"tiny", 1e-300}}),
                               candidate(63, -7.5, true, {{"prefix", 0.125}})},
                              0,
                              {},
                              {}});
  std::get<RouteDecision>(s.back().event.payload).addField("decision", 1);
  std::get<RouteDecision>(s.back().event.payload).addField("cache_ratio", 0.625);
  {  // what the request was: every field set
    RequestShape& shape = std::get<RouteDecision>(s.back().event.payload).shape;
    shape.input_tokens = 43'459;
    shape.output_tokens = 812;
    shape.trace_time = 12'500'000;
    shape.think = 2'250'000;
    shape.session_turns = 26;
    shape.due_start = 7'000'000;
    shape.prompt.input_tokens = 43'459;
    shape.prompt.shared_prefix_tokens = 1'200;
    shape.prompt.shared_scope = 0xb011e9a7e5c0de01ULL;
    shape.prompt.session_scope = 0x5e55104a9e47ULL;
    shape.prompt.source_block_size = 512;
    shape.prompt.source_hashes = {12292995, 12292996, 0xffffffffffffffffULL};
    shape.prompt.unique_scope = 42;
  }
  full("admission", Admission{5, 6, 1, AdmissionResult::NoSpace, RoutePath::Reseed, 123'456});
  full("seed", SeedStarted{7, 8, 3, 4, 9000, true});
  full("transfer_start", TransferStarted{11, 1, 2, 4096, 4096LL * 327'680, 2500});
  full("transfer_end", TransferFinished{12, 2, 3, 8192, 8192LL * 327'680, true, "completed after retry"});
  full("eviction", Eviction{5, 99, 65536, EvictionGranularity::Block, 3});
  full("link", LinkHealth{2, 7, LinkState::Dead, "handshake timeout: D7 did not preallocate 9000 tokens", 4});
  full("crash", WorkerCrashed{8, "CUDA error: out of memory", 12});
  full("restart", WorkerRestarted{9});
  full("correction", Correction{10, 13, 14, 100, 2000, 1900, CorrectionFault::Drop});
  full("request_done",
       RequestDone{15, 16, 4, 11, RoutePath::Transient, RequestStatus::Failed, 150'000, 2'500'000, 8000, 300,
                   "KVTransferError: Decode instance could be dead", 6000, 7000, 7500, -3'000'000});
  full("knob", KnobChanged{"K", 100, 200, "grpc:127.0.0.1:5000", {"127.0.0.1:5000", "token"}});
  full("policy", PolicyChanged{"linear", "kv-aware", "console", {"[::1]:6000", "open"}});
  full("snapshot",
       Snapshot{{{1, 500, 1000, 900, 2, 3, 4, 5, 6, true, 250, 17, 1, 3000, 12, 640, 40, 30, 20, 10, 70, 60},
                 {63, 7, 8, 9, 10, 11, 12, 13, 14, true, 15, 16, 2, 4, 5, 9, 8, 7, 6, 5, 4, 3}},
                {{1, 2, 3, 4, LinkState::Suspect}, {3, 63, 5, 6, LinkState::Dead}}});
  full("run_finished",
       RunFinished{true, {"d0.log: 12 lines like \"Xyz batch. #foo: <n>\"", "p0.log: 1 malformed line"}});
  full("retraction", Retraction{3, {9'000'000'001, 42}, 31'000, 0.7, 0.2857});
  full("run_control",
       RunControlChanged{RunAction::Seek, 25, 305'000'000, "grpc:127.0.0.1:5000", {"127.0.0.1:5000", "open"}});
  full("health", WorkerHealthChanged{"P0", WorkerHealth::Unreachable, "GET http://10.0.0.7:30000/metrics: timed out"});
  full("run_mark", RunMarked{RunMarkAction::End,
                             3,
                             "K=200 seed 2 \xC3\xBC",
                             {{"K", "200"}, {"flags", "--a=1 --b"}},
                             "kvscope-cli mark",
                             {"unix:/run/kvscope.sock", "token"}});

  // Edge values: none/-1 markers, false flags, empty strings and lists, extreme integers, odd doubles.
  edge("route/none eligible",
       ev(0, 0,
          RouteDecision{
              0, 0, 0, "", kNoWorker, false, {candidate(0, 0, false, {}), candidate(1, -1, false, {})}, 0, {}, {}}));
  edge("route/nan and inf scores",
       ev(1, 1,
          RouteDecision{1,
                        1,
                        1,
                        "dynamo-kv",
                        0,
                        true,
                        {candidate(0, std::numeric_limits<double>::quiet_NaN(), true, {{"logit", -INFINITY}}),
                         candidate(1, INFINITY, true, {{"", 1}})},
                        0,
                        {},
                        {}}));
  edge("route/no candidates", ev(2, 2, RouteDecision{}));
  edge("request_done/no token",
       ev(3, 4, RequestDone{1, 2, 1, kNoWorker, RoutePath::Local, RequestStatus::Ok, -1, 0, 0, 0, ""}));
  edge("transfer_end/failed", ev(4, 5, TransferFinished{1, 0, 0, 1, 1, false, "transfer timeout"}));
  edge("extremes",
       ev(std::numeric_limits<std::uint64_t>::max(), std::numeric_limits<SimTime>::min(),
          Admission{std::numeric_limits<RequestId>::max(), std::numeric_limits<SessionId>::max(), 63,
                    AdmissionResult::Rejected, RoutePath::Direct, std::numeric_limits<std::int64_t>::min()}));
  edge("run_started/unicode, empty lists",
       ev(5, 0, RunStarted{"données-ü-\xF0\x9F\x9A\x80", "linear", 0, "", {}, {}, 0, {}, "", 0, 0}));
  edge("snapshot/empty", ev(6, 7, Snapshot{}));
  edge("snapshot/dead worker",
       ev(7, 8, Snapshot{{{0, 0, 0, 0, 0, 0, 0, 0, 0, false}}, {{0, 0, 0, 0, LinkState::Alive}}}));
  edge("run_finished/stopped", ev(8, 9, RunFinished{false}));
  edge("retraction/ratio at its floor", ev(10, 11, Retraction{0, {1}, 0, NewTokenRatio::minimum(), 1.0}));
  edge("knob/negative zero and huge", ev(9, 10, KnobChanged{"rho", -0.0, 1e308, "", {}}));

  // Every value of every enum.
  for (auto p : {RoutePath::Direct, RoutePath::Seed, RoutePath::Reseed, RoutePath::Transient, RoutePath::Local}) {
    edge(std::string("admission/path ") + toString(p), ev(20, 20, Admission{1, 1, 0, AdmissionResult::Admitted, p, 1}));
    edge(std::string("request_done/path ") + toString(p),
         ev(21, 21, RequestDone{1, 1, 1, 0, p, RequestStatus::Ok, 1, 2, 3, 4, ""}));
  }
  for (auto r : {AdmissionResult::Admitted, AdmissionResult::NoSpace, AdmissionResult::Rejected})
    edge(std::string("admission/result ") + toString(r), ev(22, 22, Admission{1, 1, 0, r, RoutePath::Seed, 1}));
  for (auto l : {LinkState::Alive, LinkState::Suspect, LinkState::Dead}) {
    edge(std::string("link/state ") + toString(l), ev(23, 23, LinkHealth{0, 0, l, "", 0}));
    edge(std::string("snapshot/link state ") + toString(l), ev(24, 24, Snapshot{{}, {{0, 1, 2, 3, l}}}));
  }
  for (auto g : {EvictionGranularity::Session, EvictionGranularity::Block})
    edge(std::string("eviction/") + toString(g), ev(25, 25, Eviction{0, 1, 2, g, 1}));
  for (auto st : {RequestStatus::Ok, RequestStatus::Failed})
    edge(std::string("request_done/status ") + toString(st),
         ev(26, 26, RequestDone{1, 1, 1, 0, RoutePath::Seed, st, 1, 2, 3, 4, "x"}));
  for (auto f : {CorrectionFault::Crash, CorrectionFault::Drop, CorrectionFault::None})
    edge(std::string("correction/") + toString(f), ev(27, 27, Correction{0, 1, 2, 3, 4, 5, f}));
  for (auto a : {RunAction::Paused, RunAction::Resumed, RunAction::Speed, RunAction::Seek})
    edge(std::string("run_control/") + toString(a), ev(29, 29, RunControlChanged{a, 0, 0, "", {}}));
  for (auto h : {WorkerHealth::Unknown, WorkerHealth::Ok, WorkerHealth::Degraded, WorkerHealth::Unreachable})
    edge(std::string("health/") + toString(h), ev(31, 31, WorkerHealthChanged{"D0", h, ""}));
  for (auto a : {RunMarkAction::Start, RunMarkAction::End})
    edge(std::string("run_mark/") + toString(a), ev(30, 30, RunMarked{a, 0, "", {}, "", {}}));
  for (auto r : {WorkerRole::Prefill, WorkerRole::Decode, WorkerRole::Unified})
    edge(std::string("run_started/role ") + toString(r),
         ev(28, 28, RunStarted{"s", "p", 1, "h", {{"W", r, 1}}, {{"P", r, 2}}, 0.5, {}, "", 0, 0}));
  return s;
}

const std::vector<Sample>& samples() {
  static const std::vector<Sample> s = makeSamples();
  return s;
}

// Every field of `m` (recursively, every element of repeated fields) is present and non-default:
// the proof that a sample exercised every field the schema has. Returns the first offending path.
std::string firstDefaultField(const pb::Message& m, const std::string& path) {
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (f->containing_oneof() && !r->HasField(m, f)) continue;  // only the oneof's set member counts
    const std::string here = path + "." + f->name();
    if (f->is_repeated()) {
      const int n = r->FieldSize(m, f);
      if (n == 0) return here + " (empty)";
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE)
        for (int k = 0; k < n; ++k) {
          auto bad = firstDefaultField(r->GetRepeatedMessage(m, f, k), here + "[" + std::to_string(k) + "]");
          if (!bad.empty()) return bad;
        }
      continue;
    }
    if (!r->HasField(m, f)) return here;
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      auto bad = firstDefaultField(r->GetMessage(m, f), here);
      if (!bad.empty()) return bad;
    }
  }
  return {};
}

std::string json(const Event& e) { return eventToJson(e).dump(); }

QByteArray bytesOf(const v1::Event& e) {
  std::string s;
  e.SerializeToString(&s);
  return QByteArray::fromStdString(s);
}

}  // namespace

class TestEventConvert : public QObject {
  Q_OBJECT
 private slots:
  void samplesCoverEveryKind() {
    std::set<std::string> kinds;
    for (const auto& s : samples())
      if (s.every_field) kinds.insert(eventKindName(s.event.payload));
    QCOMPARE(kinds.size(), std::variant_size_v<EventPayload>);
    // The proto has exactly one payload field per core kind, named like it.
    const auto* oneof = v1::Event::descriptor()->FindOneofByName("payload");
    QVERIFY(oneof);
    QCOMPARE(static_cast<std::size_t>(oneof->field_count()), std::variant_size_v<EventPayload>);
    for (int i = 0; i < oneof->field_count(); ++i)
      QVERIFY2(kinds.count(oneof->field(i)->name()), oneof->field(i)->name().c_str());
  }

  void roundTrip_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < samples().size(); ++i) QTest::newRow(samples()[i].name.c_str()) << static_cast<int>(i);
  }
  void roundTrip() {
    QFETCH(int, index);
    const Sample& sample = samples()[static_cast<std::size_t>(index)];
    v1::Event proto;
    toProto(sample.event, &proto);
    QCOMPARE(eventKindName(proto), eventKindName(sample.event.payload));
    if (sample.every_field) {
      const auto bad = firstDefaultField(proto, "event");
      QVERIFY2(bad.empty(), qPrintable("not exercised (default value): " + q(bad)));
    }

    std::string bytes;
    QVERIFY(proto.SerializeToString(&bytes));
    v1::Event parsed;
    QVERIFY(parsed.ParseFromString(bytes));
    Event back;
    std::string error;
    QVERIFY2(fromProto(parsed, &back, &error), error.c_str());
    QCOMPARE(q(json(back)), q(json(sample.event)));
  }

  void componentNamesAreInterned() {
    const Sample& route = samples()[1];
    QCOMPARE(eventKindName(route.event.payload), "route");
    v1::Event proto;
    toProto(route.event, &proto);
    Event a, b;
    QVERIFY(fromProto(proto, &a, nullptr));
    QVERIFY(fromProto(proto, &b, nullptr));
    const auto& ca = std::get<RouteDecision>(a.payload).candidates[0];
    const auto& cb = std::get<RouteDecision>(b.payload).candidates[0];
    QCOMPARE(ca.num_components, std::uint8_t{6});
    for (std::uint8_t i = 0; i < ca.num_components; ++i) {
      QVERIFY(ca.components[i].name != nullptr);
      QVERIFY(ca.components[i].name == cb.components[i].name);  // the same interned pointer
    }
    QCOMPARE(ca.component("load_floor"), 200.0);
    // A name decoded on another thread resolves to the same process-wide string.
    const char* other = nullptr;
    std::thread([&] {
      Event c;
      if (fromProto(proto, &c, nullptr)) other = std::get<RouteDecision>(c.payload).candidates[0].components[0].name;
    }).join();
    QVERIFY(other != nullptr && other == ca.components[0].name);
  }

  void badProtosAreRefused_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    auto row = [](const char* name, const v1::Event& e, const char* expected) {
      QTest::newRow(name) << bytesOf(e) << QString(expected);
    };
    v1::Event e;
    e.set_seq(7);
    row("no payload", e, "event seq 7 has no payload");

    e.mutable_admission()->set_result(static_cast<v1::AdmissionResult>(99));
    e.mutable_admission()->set_path(v1::ROUTE_PATH_SEED);
    row("enum 99", e, "admission.result: unknown value 99");
    e.mutable_admission()->set_result(v1::ADMISSION_RESULT_ADMITTED);
    e.mutable_admission()->set_path(v1::ROUTE_PATH_UNSPECIFIED);
    row("enum unspecified", e, "admission.path: unspecified (0)");

    e.Clear();
    e.mutable_eviction()->set_worker(600);
    e.mutable_eviction()->set_granularity(v1::EVICTION_GRANULARITY_BLOCK);
    row("worker 600", e, "eviction.worker: 600 is outside -1..511");
    e.mutable_eviction()->set_worker(-2);
    row("worker -2", e, "eviction.worker: -2 is outside -1..511");
    e.Clear();
    e.mutable_seed()->set_prefill(64);
    row("prefill 64", e, "seed.prefill: 64 is outside -1..63");
    e.Clear();
    e.mutable_route()->set_chosen(0);
    e.mutable_route()->mutable_shape()->set_input_tokens(-5);
    row("shape input -5", e, "route.shape.input_tokens: -5, expected 0 to 100000000");
    e.mutable_route()->mutable_shape()->set_input_tokens(1000);
    e.mutable_route()->mutable_shape()->mutable_prompt()->set_input_tokens(1001);
    row("prompt longer than its input", e, "route.shape.prompt.input_tokens: 1001, expected 0 to the input's 1000");
    e.mutable_route()->mutable_shape()->mutable_prompt()->set_input_tokens(1000);
    e.mutable_route()->mutable_shape()->mutable_prompt()->set_source_block_size(512);
    for (int i = 0; i < 4; ++i) e.mutable_route()->mutable_shape()->mutable_prompt()->add_source_hashes(i);
    row("more source blocks than the input holds", e, "route.shape.prompt.source_hashes: 4 ids, at most 2");
    e.mutable_route()->mutable_shape()->mutable_prompt()->clear_source_hashes();
    e.mutable_route()->mutable_shape()->set_think_us(-1);
    row("negative think", e, "route.shape.think_us: -1, expected >= 0");

    auto* route = e.mutable_route();
    for (int i = 0; i < 2; ++i) route->add_candidates()->set_worker(i);
    route->mutable_candidates(1)->set_worker(600);
    row("candidate worker 600", e, "route.candidates[1].worker: 600 is outside 0..511");
    route->mutable_candidates(1)->set_worker(-1);
    row("candidate worker -1", e, "route.candidates[1].worker: -1 is outside 0..511");
    route->mutable_candidates(1)->set_worker(1);
    for (int i = 0; i < 7; ++i) {
      auto* c = route->mutable_candidates(0)->add_components();
      c->set_name("c" + std::to_string(i));
      c->set_value(i);
    }
    row("7 components", e, "route.candidates[0].components: 7 entries, at most 6");
    route->mutable_candidates(0)->clear_components();
    route->mutable_candidates(0)->add_components()->set_name(std::string(129, 'x'));
    row("component name too long", e, "route.candidates[0].components[0].name: not accepted");
    route->mutable_candidates(0)->clear_components();
    while (route->candidates_size() <= 512) route->add_candidates();
    row("513 candidates", e, "route.candidates: 513 entries, at most 512");

    e.Clear();
    e.mutable_snapshot()->add_workers()->set_worker(-1);
    row("snapshot worker -1", e, "snapshot.workers[0].worker: -1 is outside 0..511");
    e.Clear();
    auto* link = e.mutable_snapshot()->add_links();
    link->set_worker(1);
    link->set_state(static_cast<v1::LinkState>(99));
    row("snapshot link state 99", e, "snapshot.links[0].state: unknown value 99");

    e.Clear();
    e.mutable_run_started()->add_workers()->set_role(v1::WORKER_ROLE_DECODE);
    e.mutable_run_started()->add_workers()->set_role(static_cast<v1::WorkerRole>(42));
    row("run_started role 42", e, "run_started.workers[1].role: unknown value 42");
    e.Clear();
    for (int i = 0; i < 513; ++i) e.mutable_run_started()->add_workers()->set_role(v1::WORKER_ROLE_DECODE);
    row("run_started 513 workers", e, "run_started.workers: 513 entries, at most 512");
    e.Clear();
    e.mutable_run_control()->set_who("console");
    row("run_control action unspecified", e, "run_control.action: unspecified (0)");
    e.Clear();
    e.mutable_run_mark()->set_name("k200");
    row("run_mark action unspecified", e, "run_mark.action: unspecified (0)");
    e.Clear();
    e.mutable_run_mark()->set_action(v1::RUN_MARK_ACTION_START);
    e.mutable_run_mark()->set_name(std::string(129, 'x'));
    row("run_mark name too long", e, "run_mark.name: 129 bytes, at most 128");
    e.Clear();
    e.mutable_run_mark()->set_action(v1::RUN_MARK_ACTION_START);
    for (int i = 0; i < 33; ++i) e.mutable_run_mark()->add_parameters()->set_name("p" + std::to_string(i));
    row("run_mark 33 parameters", e, "run_mark.parameters: 33 entries, at most 32");
    e.Clear();
    e.mutable_run_mark()->set_action(v1::RUN_MARK_ACTION_START);
    e.mutable_run_mark()->add_parameters()->set_value(std::string(300, 'v'));
    row("run_mark parameter too long", e, "run_mark.parameters[0]: longer than 64 (name) or 256 (value) bytes");

    e.Clear();
    e.set_seq(9);
    e.mutable_request_done()->set_path(v1::ROUTE_PATH_DIRECT);
    e.mutable_request_done()->set_status(static_cast<v1::RequestStatus>(-5));
    row("negative enum", e, "request_done.status: unknown value -5");

    // A kind added by a newer build arrives as an unknown field: parsed, but no payload here.
    v1::Event newer;
    newer.set_seq(11);
    QByteArray bytes = bytesOf(newer);
    bytes.append(QByteArray("\x9a\x06\x01\x08", 4));  // field 99, length-delimited, 1 byte
    QTest::newRow("kind from a newer build") << bytes << QString("event seq 11 has no payload");
  }
  void badProtosAreRefused() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    v1::Event proto;
    QVERIFY(proto.ParseFromArray(bytes.constData(), static_cast<int>(bytes.size())));
    Event out{12345, 678, RunFinished{false}};
    std::string error;
    QVERIFY(!fromProto(proto, &out, &error));
    QVERIFY2(q(error).startsWith(expected), qPrintable(q(error)));
    QCOMPARE(out.seq, std::uint64_t{12345});  // untouched on failure
    QVERIFY(std::holds_alternative<RunFinished>(out.payload));
    QVERIFY(!fromProto(proto, &out, nullptr));  // a null error is allowed
  }

  void payloadConvertersStandAlone() {
    v1::Snapshot snap;
    snap.add_workers()->set_worker(512);
    Snapshot s;
    std::string error;
    QVERIFY(!fromProto(snap, &s, &error));
    QCOMPARE(q(error), QString("workers[0].worker: 512 is outside 0..511"));

    v1::RunStarted run;
    toProto(std::get<RunStarted>(samples()[0].event.payload), &run);
    QCOMPARE(run.build_version(), std::string(KVSCOPE_VERSION));
    RunStarted r;
    QVERIFY2(fromProto(run, &r, &error), error.c_str());
    QCOMPARE(r.knobs.size(), std::size_t{3});
    QCOMPARE(r.knobs[0].first, std::string("K"));

    v1::KnobChanged k;
    toProto(KnobChanged{"epsilon", 1, 2, "me", {}}, &k);
    KnobChanged kc;
    QVERIFY(fromProto(k, &kc, &error));
    QCOMPARE(kc.name, std::string("epsilon"));
    QCOMPARE(kc.new_value, 2.0);
    QCOMPARE(kc.who, std::string("me"));
  }

  void knobSpecsAndPolicies() {
    for (const auto& spec : KnobRegistry::specs()) {
      v1::KnobSpec p;
      toProto(spec, &p);
      QCOMPARE(q(p.name()), q(std::string(spec.name)));
      QCOMPARE(q(p.unit()), q(std::string(spec.unit)));
      QCOMPARE(p.min(), spec.min);
      QCOMPARE(p.max(), spec.max);
      QCOMPARE(p.default_value(), spec.default_value);
      QCOMPARE(p.integer(), spec.integer);
      QCOMPARE(q(p.description()), q(std::string(spec.description)));
      std::string joined;
      for (const auto& name : p.policies()) joined += (joined.empty() ? "" : ",") + name;
      std::string expected = spec.scope == KnobScope::Shared ? "all" : "";
      for (std::string_view name : policiesReading(spec.id))
        expected += (expected.empty() ? "" : ",") + std::string(name);
      QCOMPARE(q(joined), q(expected));
    }
    for (auto name : policyNames()) {
      v1::Policy p;
      policyToProto(name, &p);
      const std::set<std::string> knobs(p.knobs().begin(), p.knobs().end());
      QVERIFY(knobs.count("rho"));  // an "all" knob
      QCOMPARE(knobs.count("K") == 1, name == "kv-aware" || name == "exclusive-overlap");
      QCOMPARE(knobs.count("cache_threshold") == 1, name == "sglang-cache-aware");
      QCOMPARE(knobs.count("router_temperature") == 1, name == "dynamo-kv");
      QCOMPARE(knobs.count("cache_ratio_gate") == 1, name == "unified-gated");
    }
  }

  // Random bytes, and valid events with bytes flipped, inserted or cut off: parsing may fail, and
  // decoding may fail, but nothing crashes, and whatever decodes is a usable event.
  void randomBytesNeverCrash() {
    pb::LogSilencer quiet;  // the parser logs every invalid UTF-8 string it meets
    std::mt19937_64 rng(20240607);
    std::vector<std::string> valid;
    for (const auto& s : samples()) {
      v1::Event p;
      toProto(s.event, &p);
      valid.push_back(p.SerializeAsString());
    }
    int parsed = 0, decoded = 0;
    auto attempt = [&](const std::string& bytes) {
      v1::Event proto;
      if (!proto.ParseFromString(bytes)) return;
      ++parsed;
      Event out;
      std::string error;
      if (!fromProto(proto, &out, &error)) {
        QVERIFY(!error.empty());
        return;
      }
      ++decoded;
      (void)json(out);  // every decoded event is one the rest of the program can handle
    };
    for (int i = 0; i < 2000; ++i) {
      std::string bytes(rng() % 256, '\0');
      for (auto& c : bytes) c = static_cast<char>(rng());
      attempt(bytes);
    }
    const int random_parsed = parsed;
    for (int i = 0; i < 2000; ++i) {
      std::string bytes = valid[rng() % valid.size()];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits && !bytes.empty(); ++k) {
        const std::size_t at = rng() % bytes.size();
        switch (rng() % 3) {
          case 0:
            bytes[at] = static_cast<char>(rng());
            break;
          case 1:
            bytes.insert(at, 1, static_cast<char>(rng()));
            break;
          default:
            bytes.resize(at);
            break;
        }
      }
      attempt(bytes);
    }
    qInfo("4000 inputs: %d random and %d mutated parsed, %d decoded", random_parsed, parsed - random_parsed, decoded);
    QVERIFY(decoded > 0);  // the mutations reach the decoder, not only the parser
  }
};

QTEST_GUILESS_MAIN(TestEventConvert)
#include "test_event_convert.moc"
