// Telemetry over real gRPC: a real server on a loopback port chosen by the OS, a real simulation
// feeding the hub, real C++ clients through the generated stub. Every event in order for a reader
// that keeps up, a Gap (never a slower run) for one that does not, resubscription filling a gap,
// kinds filters, GetState mid-run; and the hub's gap bookkeeping on its own.
#include <QtTest>

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <future>
#include <thread>

#include "backend/convert/EventConvert.h"
#include "backend/service/TelemetryService.h"
#include "core/run/SimulationRunner.h"
#include "core/run/WorkloadFactory.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

using namespace kvscope;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kRunSeconds = 600;
constexpr double kPacedSpeed = 200;  // 600 simulated seconds in 3 wall seconds

Scenario e3() {
  Scenario s = Scenario::load("e3-load-floor");
  s.duration_s = kRunSeconds;
  return s;
}

std::unique_ptr<SimulationRunner> makeRunner(std::vector<EventSink*> sinks) {
  const Scenario s = e3();
  return std::make_unique<SimulationRunner>(s, buildWorkload(s, s.seed), std::move(sinks));
}

// A real server around one hub, on 127.0.0.1 and a free port.
struct TestServer {
  explicit TestServer(TelemetryHub& hub, const RunControl* control = nullptr) : service(hub, control) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~TestServer() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2)); }

  // Own subchannel per client, so a slow reader's small window is its own.
  std::unique_ptr<v1::Telemetry::Stub> client(bool small_window = false) const {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    if (small_window) {
      // Without this, HTTP/2 flow control would buffer megabytes for a slow reader, and it would
      // take minutes to read what the server already sent instead of seeing the server's Gap.
      args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
      args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 * 1024);
    }
    return v1::Telemetry::NewStub(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args));
  }

  TelemetryService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

struct Stream {
  std::vector<std::uint64_t> seqs;
  std::vector<std::string> kinds;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
  std::vector<std::size_t> gap_at;  // index into seqs where each gap arrived
  bool finished = false;            // RunFinished received
  grpc::Status status;
};

struct ReadOptions {
  std::uint64_t from_seq = 0;
  std::vector<std::string> kinds;
  std::chrono::microseconds per_message{0};
  std::uint64_t stop_after_seq = UINT64_MAX;  // cancel the call once this seq arrived
};

// Reads a Subscribe stream to its end (or to stop_after_seq) on the calling thread.
Stream readStream(v1::Telemetry::Stub& stub, ReadOptions o) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  v1::SubscribeRequest req;
  req.set_from_seq(o.from_seq);
  for (const auto& k : o.kinds) req.add_kinds(k);
  auto reader = stub.Subscribe(&ctx, req);
  Stream s;
  v1::TelemetryMessage m;
  while (reader->Read(&m)) {
    if (m.has_gap()) {
      s.gaps.emplace_back(m.gap().first_seq(), m.gap().last_seq());
      s.gap_at.push_back(s.seqs.size());
    } else {
      s.seqs.push_back(m.event().seq());
      s.kinds.emplace_back(eventKindName(m.event()));
      s.finished |= m.event().has_run_finished();
      if (m.event().seq() >= o.stop_after_seq) {
        ctx.TryCancel();
        break;
      }
    }
    if (o.per_message.count() > 0) std::this_thread::sleep_for(o.per_message);
  }
  s.status = reader->Finish();
  return s;
}

bool contiguous(const std::vector<std::uint64_t>& seqs, std::uint64_t first) {
  for (std::size_t i = 0; i < seqs.size(); ++i)
    if (seqs[i] != first + i) return false;
  return true;
}

Event requestDone(std::uint64_t seq) {
  Event e;
  e.seq = seq;
  e.time = static_cast<SimTime>(seq) * 1000;
  e.payload = RequestDone{};
  return e;
}

double runAlone() {
  auto runner = makeRunner({});
  const auto t0 = Clock::now();
  runner->start(kPacedSpeed);
  runner->waitFinished();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

class TestTelemetryService : public QObject {
  Q_OBJECT
 private slots:
  void everyEventInOrderThenOk() {
    TelemetryHub hub;
    TestServer server(hub);
    auto stub = server.client();
    auto live = std::async(std::launch::async, [&] { return readStream(*stub, {}); });
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{1}, 5000);  // subscribed before seq 0
    auto runner = makeRunner({&hub});
    runner->start(kPacedSpeed);
    runner->waitFinished();
    QVERIFY(live.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    const Stream s = live.get();
    QVERIFY2(s.status.ok(), s.status.error_message().c_str());
    QVERIFY(s.gaps.empty());
    QCOMPARE(s.seqs.size(), static_cast<std::size_t>(hub.state().last_seq + 1));
    QVERIFY(contiguous(s.seqs, 0));
    QCOMPARE(s.kinds.front(), std::string("run_started"));
    QCOMPARE(s.kinds.back(), std::string("run_finished"));
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{0}, 5000);  // the ended call let go

    // The same from the replay buffer, after the run: a late subscriber misses nothing either.
    const Stream late = readStream(*stub, {});
    QVERIFY(late.status.ok());
    QVERIFY(late.gaps.empty());
    QVERIFY(late.seqs == s.seqs);
    QVERIFY(late.kinds == s.kinds);
  }

  void slowSubscriberGetsGapFastOneMissesNothing() {
    const double alone = runAlone();
    TelemetryHub hub(TelemetryHub::Options{1000000, 64});
    TestServer server(hub);
    auto fast_stub = server.client();
    auto slow_stub = server.client(true);
    auto fast = std::async(std::launch::async, [&] { return readStream(*fast_stub, {}); });
    auto slow = std::async(std::launch::async, [&] {
      ReadOptions o;
      o.per_message = std::chrono::milliseconds(2);
      return readStream(*slow_stub, o);
    });
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{2}, 5000);
    auto runner = makeRunner({&hub});
    const auto t0 = Clock::now();
    runner->start(kPacedSpeed);
    runner->waitFinished();
    const double with_slow = std::chrono::duration<double>(Clock::now() - t0).count();
    QVERIFY(runner->finished());
    const std::uint64_t last = hub.state().last_seq;

    const Stream f = fast.get();
    QVERIFY2(f.status.ok(), f.status.error_message().c_str());
    QVERIFY(f.gaps.empty());
    QCOMPARE(f.seqs.size(), static_cast<std::size_t>(last + 1));
    QVERIFY(contiguous(f.seqs, 0));

    const Stream s = slow.get();
    QVERIFY2(s.status.ok(), s.status.error_message().c_str());
    QVERIFY(!s.gaps.empty());
    QVERIFY(s.finished || s.gaps.back().second == last);  // the end is delivered or reported missing
    std::uint64_t expected = 0;                           // seqs and gaps interleave into exactly 0..last
    for (std::size_t i = 0, g = 0; i <= s.seqs.size(); ++i) {
      for (; g < s.gaps.size() && s.gap_at[g] == i; ++g) {
        QVERIFY(s.gaps[g].first <= s.gaps[g].second);
        QCOMPARE(s.gaps[g].first, expected);
        expected = s.gaps[g].second + 1;
      }
      if (i < s.seqs.size()) QCOMPARE(s.seqs[i], expected++);
    }
    QCOMPARE(expected, last + 1);
    qInfo("run alone %.2f s, with a slow and a fast subscriber %.2f s; %zu events, slow got %zu in %zu gaps", alone,
          with_slow, f.seqs.size(), s.seqs.size(), s.gaps.size());
    QVERIFY2(with_slow <= 1.5 * alone + 0.5, "a slow subscriber slowed the run");
  }

  void resubscribeFillsGapAndOldSeqGetsGapFirst() {
    TelemetryHub hub(TelemetryHub::Options{1000000, 64});
    TestServer server(hub);
    auto stub = server.client(true);
    auto first = std::async(std::launch::async, [&] {
      ReadOptions o;
      o.per_message = std::chrono::milliseconds(1);
      return readStream(*stub, o);
    });
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{1}, 5000);
    auto runner = makeRunner({&hub});
    runner->start(0);  // as fast as possible: a queue of 64 read at 1 ms a message overflows
    runner->waitFinished();
    const Stream s = first.get();
    QVERIFY(s.status.ok());
    QVERIFY(!s.gaps.empty());
    for (const auto& [from, to] : {s.gaps.front(), s.gaps.back()}) {
      ReadOptions o;
      o.from_seq = from;
      o.stop_after_seq = to;
      const Stream fill = readStream(*stub, o);
      QVERIFY(fill.gaps.empty());
      QCOMPARE(fill.seqs.size(), static_cast<std::size_t>(to - from + 1));
      QVERIFY(contiguous(fill.seqs, from));
    }

    // A small replay buffer no longer holds the start: Gap{0, oldest - 1}, then the rest.
    TelemetryHub small(TelemetryHub::Options{1000, 20000});
    TestServer small_server(small);
    auto runner2 = makeRunner({&small});
    runner2->start(0);
    runner2->waitFinished();
    const std::uint64_t last = small.state().last_seq;
    auto small_stub = small_server.client();
    const Stream old = readStream(*small_stub, {});
    QVERIFY(old.status.ok());
    QCOMPARE(old.gaps.size(), std::size_t{1});
    QCOMPARE(old.gap_at.front(), std::size_t{0});
    QCOMPARE(old.gaps.front().first, std::uint64_t{0});
    QCOMPARE(old.gaps.front().second, last - 1000);
    QCOMPARE(old.seqs.size(), std::size_t{1000});
    QVERIFY(contiguous(old.seqs, last - 999));
    QVERIFY(old.finished);
  }

  void kindsFilter() {
    TelemetryHub hub;
    TestServer server(hub);
    auto stub = server.client();
    auto live = std::async(std::launch::async, [&] { return readStream(*stub, {0, {"snapshot"}}); });
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{1}, 5000);
    auto runner = makeRunner({&hub});
    runner->start(0);
    runner->waitFinished();
    const Stream s = live.get();
    QVERIFY2(s.status.ok(), s.status.error_message().c_str());  // ends without seeing run_finished
    QVERIFY(s.gaps.empty());
    QVERIFY(s.seqs.size() >= kRunSeconds - 1);  // one snapshot per simulated second
    for (const auto& k : s.kinds) QCOMPARE(k, std::string("snapshot"));
    const Stream replayed = readStream(*stub, {0, {"snapshot"}});
    QVERIFY(replayed.seqs == s.seqs);

    const Stream bad = readStream(*stub, {0, {"snapshot", "bogus"}});
    QCOMPARE(bad.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    const std::string message = bad.status.error_message();
    QVERIFY2(message.find("\"bogus\"") != std::string::npos, message.c_str());
    for (const char* k : {"route", "snapshot", "knob", "run_finished"})
      QVERIFY2(message.find(k) != std::string::npos, message.c_str());
    QVERIFY(bad.seqs.empty());
  }

  void getStateMidRun() {
    TelemetryHub hub;
    auto runner = makeRunner({&hub});
    TestServer server(hub, runner.get());
    auto stub = server.client();
    {
      grpc::ClientContext ctx;
      v1::State before;
      QVERIFY(stub->GetState(&ctx, {}, &before).ok());  // nothing yet is an empty answer
      QVERIFY(!before.has_run());
      QCOMPARE(before.knobs_size(), 0);
    }
    runner->start(kPacedSpeed);
    v1::State st;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
          grpc::ClientContext ctx;
          return stub->GetState(&ctx, {}, &st).ok() && st.snapshot().workers_size() == 3;
        }(),
        5000);
    QVERIFY(!runner->finished());
    QCOMPARE(st.run().scenario(), std::string("e3-load-floor"));
    QCOMPARE(st.run().workers_size(), 3);
    QCOMPARE(st.run().prefill_size(), 1);
    QCOMPARE(st.policy(), std::string("kv-aware"));
    bool k200 = false;
    for (const auto& k : st.knobs()) k200 |= k.name() == "K" && k.value() == 200;
    QVERIFY(k200);
    QVERIFY(st.last_seq() > 0);
    QVERIFY(st.sim_time_us() > 0 && st.sim_time_us() < secondsToTime(kRunSeconds));
    QCOMPARE(st.speed(), kPacedSpeed);
    QVERIFY(!st.paused());
    runner->stop();
  }

  // Streams cannot be hoarded: one host holds at most max_subscribers_per_peer, and a stream the
  // client stops reading is ended once a write has waited stalled_write, its slot freed.
  void streamsCannotBeHoarded() {
    TelemetryHub hub;
    TestServer server(hub);
    TelemetryService::Limits limits;
    limits.max_subscribers = 8;
    limits.max_subscribers_per_peer = 2;
    limits.stalled_write = std::chrono::seconds(1);
    server.service.guard(CallAuthorization(), limits);
    auto runner = makeRunner({&hub});
    runner->start(100);  // 600 simulated seconds over ~6 wall seconds: events keep coming

    // Two never-read streams from this host; the third is refused for the host, not the server.
    struct Hoarder {
      grpc::ClientContext ctx;
      std::unique_ptr<grpc::ClientReader<v1::TelemetryMessage>> reader;
    };
    std::vector<std::unique_ptr<v1::Telemetry::Stub>> stubs;
    std::vector<std::unique_ptr<Hoarder>> hoarders;
    for (int i = 0; i < 2; ++i) {
      stubs.push_back(server.client(/*small_window=*/true));
      auto h = std::make_unique<Hoarder>();
      h->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      h->reader = stubs.back()->Subscribe(&h->ctx, v1::SubscribeRequest());
      hoarders.push_back(std::move(h));
    }
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{2}, 5000);
    auto third = server.client();
    const Stream refused = readStream(*third, {});
    QCOMPARE(refused.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    QVERIFY2(refused.status.error_message().find("per host") != std::string::npos,
             refused.status.error_message().c_str());

    // Neither reads: their windows fill, their writes wait, and after a second the server ends them
    // (well before the clients' own 60-s deadline, and before the run's end would), counted as such.
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{0}, 8000);
    QVERIFY2(!runner->finished(), "the run ended first: its end, not the stall, closed the streams");
    {
      grpc::ClientContext ctx;
      v1::State state;
      QVERIFY(third->GetState(&ctx, v1::GetStateRequest(), &state).ok());
      QCOMPARE(state.stalled_streams_ended(), std::uint64_t{2});
      QCOMPARE(state.subscribers(), 0u);
    }
    for (auto& h : hoarders) {
      h->ctx.TryCancel();
      QVERIFY(!h->reader->Finish().ok());
    }
    // The slots are free again: a reader that keeps up gets every event to the end.
    const Stream fine = readStream(*third, {});
    QVERIFY2(fine.status.ok(), fine.status.error_message().c_str());
    QVERIFY(fine.finished);
    runner->waitFinished();
  }

  void shutdownEndsAnOpenStream() {
    TelemetryHub hub;  // no run: the stream waits for events that never come
    TestServer server(hub);
    auto stub = server.client();
    auto waiting = std::async(std::launch::async, [&] { return readStream(*stub, {}); });
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{1}, 5000);
    const auto t0 = Clock::now();
    server.server->Shutdown(std::chrono::system_clock::now());  // cancels what is still running
    QVERIFY(Clock::now() - t0 < std::chrono::seconds(2));
    QVERIFY(waiting.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    QVERIFY(!waiting.get().status.ok());
    QTRY_COMPARE_WITH_TIMEOUT(hub.subscribers(), std::size_t{0}, 5000);  // the reactor let go
  }

  void hubAloneGapCoversExactlyTheDroppedSeqs() {
    TelemetryHub hub(TelemetryHub::Options{100000, 10});
    std::atomic<int> notified{0};
    auto sub = hub.subscribe(0, {}, [&] { ++notified; });
    for (std::uint64_t seq = 0; seq < 1000; ++seq) hub.onEvent(requestDone(seq));
    QCOMPARE(notified.load(), 1);  // once, when the idle consumer got its first item
    TelemetryItem it;
    std::vector<std::uint64_t> seqs;
    std::vector<TelemetryItem> gaps;
    while (sub->pop(it)) {
      if (it.gap)
        gaps.push_back(it);
      else
        seqs.push_back(it.seq);
    }
    QVERIFY(contiguous(seqs, 0));
    QCOMPARE(seqs.size(), std::size_t{10});
    QCOMPARE(gaps.size(), std::size_t{1});
    QCOMPARE(gaps[0].first_seq, std::uint64_t{10});
    QCOMPARE(gaps[0].last_seq, std::uint64_t{999});
    QVERIFY(!sub->drained());

    // Room again: newer events follow; the run's end drains the subscription.
    Event end;
    end.seq = 1001;
    end.payload = RunFinished{};
    hub.onEvent(requestDone(1000));
    hub.onEvent(end);
    QCOMPARE(notified.load(), 3);  // the idle consumer for 1000; everyone live for the run's end
    QVERIFY(sub->pop(it) && !it.gap && it.seq == 1000);
    QVERIFY(sub->pop(it) && !it.gap && it.seq == 1001);
    QVERIFY(!sub->pop(it));
    QVERIFY(sub->drained());
    QVERIFY(hub.state().finished);

    // From a seq the buffer holds: exactly from there; from beyond the newest: nothing yet.
    auto again = hub.subscribe(995, {}, [] {});
    seqs.clear();
    while (again->pop(it)) seqs.push_back(it.seq);
    QVERIFY(contiguous(seqs, 995));
    QCOMPARE(seqs.size(), std::size_t{7});
    auto ahead = hub.subscribe(5000, {}, [] {});
    QVERIFY(!ahead->pop(it));
    QCOMPARE(hub.subscribers(), std::size_t{3});
    sub->close();
    again->close();
    ahead->close();
    QCOMPARE(hub.subscribers(), std::size_t{0});

    // Older than the buffer: a Gap first.
    TelemetryHub small(TelemetryHub::Options{100, 1000});
    for (std::uint64_t seq = 0; seq < 1000; ++seq) small.onEvent(requestDone(seq));
    auto old = small.subscribe(0, {}, [] {});
    QVERIFY(old->pop(it) && it.gap && it.first_seq == 0 && it.last_seq == 899);
    QVERIFY(old->pop(it) && !it.gap && it.seq == 900);
  }
};

QTEST_GUILESS_MAIN(TestTelemetryService)
#include "test_telemetry_service.moc"
