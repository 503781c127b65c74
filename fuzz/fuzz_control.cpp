// libFuzzer target for kvscope.v1.Control: a Control request is untrusted. The first byte
// of the input picks the method, the rest is the request's bytes, sent as they are through an
// in-process channel (no network) to a ControlService registered on a real grpc::Server - the same
// path a request takes in `serve`, parsing included. Behind the service is a run that takes every
// call (knobs through a real KnobRegistry, markers through a real RunMarkBook, pace and seek), so
// every check of the service is reachable.
//
// Invariants (promises of control.proto and ControlService.h):
//  - a request is answered OK, INVALID_ARGUMENT, FAILED_PRECONDITION or OUT_OF_RANGE (INTERNAL only
//    for bytes that do not parse as the request), never by a crash, a hang or UNKNOWN;
//  - an error message is bounded (the service caps what it echoes);
//  - a refused call changes nothing; an accepted one leaves every knob inside its range (whole where
//    the knob is an integer), a speed in [0, 10000], a seek inside the recording;
//  - what reaches the run (labels, origin, markers) has no control character and fits its limit.
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <string>

#include "backend/service/ControlService.h"
#include "backend/service/TelemetryHub.h"
#include "core/events/EventLimits.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/run/LiveRunControl.h"
#include "fuzz/FuzzSupport.h"
#include "kvscope/v1/control.grpc.pb.h"

namespace {

using namespace kvscope;
using fuzz::finding;

void checkLabel(const std::string& text, const char* what) {
  if (text.size() > kMaxLabelBytes) finding(std::string(what) + " over kMaxLabelBytes");
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) finding(std::string(what) + " with a control character");
}

void checkAuthor(const ChangeAuthor& a) {
  checkLabel(a.who, "a label");
  checkLabel(a.origin.peer, "a peer");
  if (a.origin.identity != "open") finding("an identity other than 'open' on a server without a token");
}

// Takes every call, as a simulation (knobs, policy, pace) and a live session (markers) and a replay
// (seek) would together; records what it was asked.
class EveryRun final : public LiveRunControl {
 public:
  static constexpr SimTime kEnd = 3'600'000'000;

  bool canChangeKnobs() const override { return true; }
  void applyKnobs(std::map<std::string, double> changes, ChangeAuthor author,
                  std::function<void(KnobRegistry::Result)> done) override {
    checkAuthor(author);
    KnobRegistry::Result result;
    {
      std::lock_guard lock(mutex_);
      result = knobs_.apply(changes, author);
    }
    done(std::move(result));
  }
  void setPolicy(std::string name, ChangeAuthor author, Done done) override {
    checkAuthor(author);
    const auto names = policyNames();
    done(policyResult(std::find(names.begin(), names.end(), std::string_view(name)) != names.end(), name));
  }
  bool canPace() const override { return true; }
  void pause(ChangeAuthor author) override { checkAuthor(author); }
  void resume(ChangeAuthor author) override { checkAuthor(author); }
  void setSpeed(double speed, ChangeAuthor author) override {
    checkAuthor(author);
    if (!std::isfinite(speed) || speed < 0 || speed > kMaxControlSpeed) finding("a speed out of range reached the run");
  }
  bool canSeek() const override { return true; }
  bool seek(SimTime time, ChangeAuthor author, std::string*) override {
    checkAuthor(author);
    if (time < 0 || time > kEnd) finding("a seek outside the recording reached the run");
    return true;
  }
  SimTime endTime() const override { return kEnd; }
  SimTime simTime() const override { return 0; }

  KnobRegistry knobs() {
    std::lock_guard lock(mutex_);
    return knobs_;
  }

 protected:
  void publishMark(const RunMarked& mark) override {
    checkLabel(mark.name, "a run name");
    checkLabel(mark.who, "a marker's label");
    if (mark.parameters.size() > kMaxRunParameters) finding("too many run parameters");
    for (const auto& [name, value] : mark.parameters)
      checkLabel(name, "a parameter name"), checkLabel(value, "a parameter value");
  }

 private:
  std::mutex mutex_;
  KnobRegistry knobs_;
};

struct Fixture {
  TelemetryHub hub;
  EveryRun run;
  ControlService service{run, hub};
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<grpc::GenericStub> stub;

  Fixture() {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    if (!server) finding("the in-process server did not start");
    stub = std::make_unique<grpc::GenericStub>(server->InProcessChannel(grpc::ChannelArguments()));
  }
};

// Method, and whether `bytes` parse as its request (else the server cannot deserialise them).
struct Method {
  const char* name;
  bool (*parses)(const std::string&);
};
template <class Request>
bool parsesAs(const std::string& bytes) {
  Request r;
  return r.ParseFromString(bytes);
}
const Method kMethods[] = {
    {"/kvscope.v1.Control/GetKnobs", parsesAs<v1::GetKnobsRequest>},
    {"/kvscope.v1.Control/SetKnobs", parsesAs<v1::SetKnobsRequest>},
    {"/kvscope.v1.Control/SetPolicy", parsesAs<v1::SetPolicyRequest>},
    {"/kvscope.v1.Control/Pause", parsesAs<v1::PauseRequest>},
    {"/kvscope.v1.Control/Resume", parsesAs<v1::ResumeRequest>},
    {"/kvscope.v1.Control/SetSpeed", parsesAs<v1::SetSpeedRequest>},
    {"/kvscope.v1.Control/Seek", parsesAs<v1::SeekRequest>},
    {"/kvscope.v1.Control/MarkRun", parsesAs<v1::MarkRunRequest>},
    // Without a forecaster (a fork costs seconds): its checks before FAILED_PRECONDITION only.
    {"/kvscope.v1.Control/Preview", parsesAs<v1::PreviewRequest>},
};

void checkKnobs(const KnobRegistry& knobs) {
  for (const auto& spec : KnobRegistry::specs()) {
    const double v = knobs.get(*KnobRegistry::find(spec.name));
    if (!std::isfinite(v) || v < spec.min || v > spec.max || (spec.integer && v != std::floor(v)))
      finding("knob " + std::string(spec.name) + " out of its range after a call");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = new Fixture();  // one server for the whole process (never torn down)
  if (size == 0) return 0;
  const Method& method = kMethods[data[0] % std::size(kMethods)];
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  const KnobRegistry before = fixture->run.knobs();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  std::promise<grpc::Status> done;
  fixture->stub->UnaryCall(&ctx, method.name, grpc::StubOptions(), &request, &response,
                           [&](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status status = done.get_future().get();

  using grpc::StatusCode;
  const StatusCode code = status.error_code();
  const bool parses = method.parses(bytes);
  if (code == StatusCode::DEADLINE_EXCEEDED) finding(std::string("no answer within 20 s from ") + method.name);
  if (!parses) {
    if (code == StatusCode::OK) finding(std::string("unparsable bytes accepted by ") + method.name);
  } else if (code != StatusCode::OK && code != StatusCode::INVALID_ARGUMENT &&
             code != StatusCode::FAILED_PRECONDITION && code != StatusCode::OUT_OF_RANGE) {
    finding(std::string(method.name) + " answered " + std::to_string(code) + ": " + status.error_message());
  }
  if (status.error_message().size() > 4096)
    finding(std::string(method.name) + " answered with a " + std::to_string(status.error_message().size()) +
            "-byte message");
  const KnobRegistry after = fixture->run.knobs();
  checkKnobs(after);
  if (code != StatusCode::OK)
    for (const auto& spec : KnobRegistry::specs()) {
      const auto id = *KnobRegistry::find(spec.name);
      if (before.get(id) != after.get(id))
        finding(std::string("a refused ") + method.name + " changed knob " + std::string(spec.name));
    }
  return 0;
}
