// Telemetry throughput: events per second through Subscribe to one C++ client on loopback, with
// real event payloads (one simulated hour of e3-load-floor, repeated and renumbered).
// - Live: the benchmark thread publishes N events into the hub as fast as it can while the client
//   reads; the time runs from the first publish to the client's end of stream. Each subscriber
//   queue holds N, so nothing is dropped and the number is delivery, not loss.
// - Replay: the hub already holds the N events; a new subscriber catches up from seq 0.
// - Per message, server side: framing the hub's bytes (what TelemetryService does) against parsing
//   them into a TelemetryMessage for gRPC to serialise again (the plain generated-service way).
#include <benchmark/benchmark.h>

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/proto_buffer_writer.h>

#include <google/protobuf/io/coded_stream.h>

#include <chrono>
#include <thread>

#include "backend/convert/EventConvert.h"
#include "backend/service/TelemetryService.h"
#include "core/run/SimulationRun.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

using namespace kvscope;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kEvents = 200'000;

// The events of one simulated hour, made once.
const std::vector<Event>& oneHour() {
  static const std::vector<Event> events = [] {
    struct Collect : EventSink {
      std::vector<Event> events;
      void onEvent(const Event& e) override { events.push_back(e); }
    } collect;
    SimulationOptions o;
    o.sinks.push_back(&collect);
    runSimulation(Scenario::load("e3-load-floor"), o);
    return std::move(collect.events);
  }();
  return events;
}

// kEvents events: run_started, the hour's events again and again (without its start and end),
// run_finished, numbered 0..kEvents-1.
const std::vector<Event>& premade() {
  static const std::vector<Event> events = [] {
    const auto& hour = oneHour();
    std::vector<Event> out;
    out.reserve(kEvents);
    out.push_back(hour.front());
    for (std::size_t i = 1; out.size() + 1 < kEvents; i = i + 1 < hour.size() - 1 ? i + 1 : 1) out.push_back(hour[i]);
    out.push_back(hour.back());
    for (std::size_t i = 0; i < out.size(); ++i) out[i].seq = i;
    return out;
  }();
  return events;
}

struct Server {
  explicit Server(TelemetryHub& hub) : service(hub) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    stub = v1::Telemetry::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  }
  ~Server() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }
  TelemetryService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::unique_ptr<v1::Telemetry::Stub> stub;
};

struct Read {
  std::size_t events = 0, gaps = 0, bytes = 0;
  bool ok = false;
};

Read readAll(v1::Telemetry::Stub& stub) {
  grpc::ClientContext ctx;
  auto reader = stub.Subscribe(&ctx, v1::SubscribeRequest{});
  Read r;
  v1::TelemetryMessage m;
  while (reader->Read(&m)) {
    if (m.has_gap())
      ++r.gaps;
    else
      ++r.events;
    r.bytes += m.ByteSizeLong();
  }
  r.ok = reader->Finish().ok();
  return r;
}

void report(benchmark::State& state, const Read& r, double seconds_total) {
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(r.events) * static_cast<double>(state.iterations()) / seconds_total);
  state.counters["gaps"] = static_cast<double>(r.gaps);
  state.counters["bytes/event"] = r.events ? static_cast<double>(r.bytes) / static_cast<double>(r.events) : 0;
  if (!r.ok || r.events != kEvents) state.SkipWithError("the client did not receive every event");
}

}  // namespace

static void BM_SubscribeLive(benchmark::State& state) {
  const auto& events = premade();
  Read last;
  double total = 0;
  for (auto _ : state) {
    TelemetryHub hub(TelemetryHub::Options{kEvents, kEvents});
    Server server(hub);
    Read r;
    std::thread client([&] { r = readAll(*server.stub); });
    while (hub.subscribers() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    const auto t0 = Clock::now();
    for (const auto& e : events) hub.onEvent(e);
    client.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(seconds);
    total += seconds;
    last = r;
  }
  report(state, last, total);
}
BENCHMARK(BM_SubscribeLive)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

static void BM_SubscribeReplay(benchmark::State& state) {
  TelemetryHub hub(TelemetryHub::Options{kEvents, kEvents});
  for (const auto& e : premade()) hub.onEvent(e);
  Server server(hub);
  Read last;
  double total = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    last = readAll(*server.stub);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(seconds);
    total += seconds;
  }
  report(state, last, total);
}
BENCHMARK(BM_SubscribeReplay)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

// The hub's side alone: serialise once, append to the ring and one subscriber's queue.
static void BM_HubPublish(benchmark::State& state) {
  const auto& events = premade();
  for (auto _ : state) {
    TelemetryHub hub(TelemetryHub::Options{kEvents, kEvents});
    auto sub = hub.subscribe(0, {}, [] {});
    for (const auto& e : events) hub.onEvent(e);
    benchmark::DoNotOptimize(sub);
  }
  state.counters["events/s"] = benchmark::Counter(
      static_cast<double>(kEvents) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HubPublish)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(5);

// Server-side cost per message: the framing TelemetryService does...
static void BM_MessageFromBytesFramed(benchmark::State& state) {
  std::vector<std::string> bytes;
  v1::Event pe;
  for (std::size_t i = 0; i < 4096; ++i) {
    toProto(premade()[i], &pe);
    bytes.push_back(pe.SerializeAsString());
  }
  std::string scratch;
  std::size_t i = 0;
  for (auto _ : state) {
    const std::string& b = bytes[i++ & 4095];
    std::uint8_t header[6];
    header[0] = 0x0A;
    const std::uint8_t* end =
        google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(static_cast<std::uint32_t>(b.size()), header + 1);
    scratch.assign(reinterpret_cast<const char*>(header), static_cast<std::size_t>(end - header));
    scratch.append(b);
    grpc::Slice slice(scratch.data(), scratch.size());
    grpc::ByteBuffer buffer(&slice, 1);
    benchmark::DoNotOptimize(buffer);
  }
}
BENCHMARK(BM_MessageFromBytesFramed);

// ...and parsing into a TelemetryMessage that gRPC's proto serialiser writes out again.
static void BM_MessageFromBytesParsed(benchmark::State& state) {
  std::vector<std::string> bytes;
  v1::Event pe;
  for (std::size_t i = 0; i < 4096; ++i) {
    toProto(premade()[i], &pe);
    bytes.push_back(pe.SerializeAsString());
  }
  v1::TelemetryMessage m;
  std::size_t i = 0;
  for (auto _ : state) {
    m.mutable_event()->ParseFromString(bytes[i++ & 4095]);
    grpc::ByteBuffer buffer;
    bool own = false;
    grpc::SerializationTraits<v1::TelemetryMessage>::Serialize(m, &buffer, &own);
    benchmark::DoNotOptimize(buffer);
  }
}
BENCHMARK(BM_MessageFromBytesParsed);

BENCHMARK_MAIN();
