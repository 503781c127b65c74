#include "backend/service/ControlService.h"
#include "backend/service/CallAuthorization.h"
#include "core/model/NumberText.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <string_view>

#include "backend/convert/EventConvert.h"
#include "backend/service/TelemetryHub.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"
#include "core/router/RoutingPolicy.h"

namespace kvscope {

namespace {

using grpc::Status;
using grpc::StatusCode;

// Names from a request are echoed in error messages; a cap keeps a hostile one from inflating the
// status trailer past what clients accept (they would see a transport error instead of the message).
constexpr std::size_t kMaxEchoedName = 64;
constexpr std::size_t kMaxAuthor = 128;

std::string echo(const std::string& name) {
  if (name.size() <= kMaxEchoedName) return name;
  return name.substr(0, kMaxEchoedName) + "...";
}

std::string number(double v) { return shortestText(v); }

grpc::ServerUnaryReactor* finish(grpc::ServerUnaryReactor* reactor, StatusCode code, std::string message) {
  reactor->Finish(Status(code, std::move(message)));
  return reactor;
}

std::string replayRefusal(const char* what) {
  return std::string(what) +
         ": this server replays a recording, which cannot change what happened; knob and policy changes "
         "need a live run (kvscope-cli serve --scenario ...)";
}

// Keeps proto3 strings valid UTF-8 when cutting: never split a multi-byte sequence.
std::string truncateUtf8(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

// SetKnobs' and Preview's changes as the core takes them, or the first refusal naming its field.
std::string knobChanges(const google::protobuf::RepeatedPtrField<v1::KnobValue>& in,
                        std::map<std::string, double>* out) {
  for (int i = 0; i < in.size(); ++i) {
    const auto& change = in.Get(i);
    const std::string field = "changes[" + std::to_string(i) + "]";
    if (change.name().size() > kMaxEchoedName)
      return field + ".name: unknown knob '" + echo(change.name()) + "'; valid knobs: " + KnobRegistry::validNames();
    // A scratch registry gives exactly the core's verdict and message (unknown name, range, NaN,
    // whole numbers) without touching the run; the run's registry checks again when it applies.
    KnobRegistry scratch;
    const auto check = scratch.apply({{change.name(), change.value()}}, {});
    if (!check.ok) return field + ": " + check.error;
    // A map would silently keep one of two values for the same knob: refuse the ambiguity.
    if (!out->emplace(change.name(), change.value()).second)
      return field + ".name: knob '" + change.name() + "' is given more than once";
  }
  return {};
}

bool knownPolicy(const std::string& name) { return findPolicy(name) != nullptr; }

// Preview's look-ahead: long enough for a slow effect, short enough to stay a preview.
constexpr double kDefaultPreviewHorizonS = 600, kMaxPreviewHorizonS = 3600;

constexpr const char* kCannotPace = "a live cluster runs at its own pace: it cannot be paused, resumed or sped up";

}  // namespace

std::string controlAuthor(const std::string& requested, const std::string& peer) {
  if (requested.empty()) {
    std::string_view p = peer;
    for (std::string_view scheme : {"ipv4:", "ipv6:"})
      if (p.substr(0, scheme.size()) == scheme) p.remove_prefix(scheme.size());
    return "grpc:" + truncateUtf8(std::string(p), kMaxAuthor);
  }
  // The label ends up in event streams, recordings and terminals: no control characters.
  std::string who = truncateUtf8(requested, kMaxAuthor);
  for (char& c : who) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return who;
}

ControlService::ControlService(RunControl& run, const TelemetryHub& hub, CallAuthorization auth,
                               const WhatIfForecaster* forecaster, std::function<void(const std::string&)> log)
    : run_(run), hub_(hub), auth_(std::move(auth)), log_(std::move(log)) {
  worker_ = std::thread([this] { workerLoop(); });
  if (forecaster) previews_ = std::make_unique<PreviewQueue>(*forecaster);
}

ControlService::~ControlService() {
  previews_.reset();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

grpc::ServerUnaryReactor* ControlService::begin(grpc::CallbackServerContext* ctx, bool* allowed) const {
  auto* reactor = ctx->DefaultReactor();
  grpc::Status status = auth_.check(*ctx);
  *allowed = status.ok();
  if (!*allowed) reactor->Finish(std::move(status));
  return reactor;
}

ChangeAuthor ControlService::author(const grpc::CallbackServerContext& ctx, const std::string& who,
                                    const std::string& what) const {
  ChangeAuthor a(controlAuthor(who, ctx.peer()), auth_.origin(ctx));
  if (log_) log_("control: " + what + " by '" + a.who + "' from " + a.origin.peer + " (" + a.origin.identity + ")");
  return a;
}

void ControlService::onWorker(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(fn));
  }
  wake_.notify_one();
}

void ControlService::workerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and every queued call has been finished
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

grpc::ServerUnaryReactor* ControlService::GetKnobs(grpc::CallbackServerContext* ctx, const v1::GetKnobsRequest*,
                                                   v1::GetKnobsResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  const HubState state = hub_.state();
  for (const auto& spec : KnobRegistry::specs()) {
    toProto(spec, response->add_specs());
    auto* value = response->add_values();
    value->set_name(std::string(spec.name));
    // Before the run has started the hub knows no values yet: the registry's defaults apply.
    const auto it = state.knobs.find(value->name());
    value->set_value(it != state.knobs.end() ? it->second : spec.default_value);
  }
  for (const auto name : policyNames()) policyToProto(name, response->add_policies());
  response->set_policy(state.policy);
  reactor->Finish(Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::SetKnobs(grpc::CallbackServerContext* ctx, const v1::SetKnobsRequest* request,
                                                   v1::SetKnobsResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!run_.canChangeKnobs()) return finish(reactor, StatusCode::FAILED_PRECONDITION, replayRefusal("knob"));
  if (request->changes().empty())
    return finish(reactor, StatusCode::INVALID_ARGUMENT,
                  "changes: empty; give at least one knob (valid knobs: " + KnobRegistry::validNames() + ")");
  std::map<std::string, double> changes;
  if (std::string error = knobChanges(request->changes(), &changes); !error.empty())
    return finish(reactor, StatusCode::INVALID_ARGUMENT, error);
  std::string what = "SetKnobs";
  for (const auto& [name, value] : changes) what += " " + name + "=" + number(value);
  run_.applyKnobs(std::move(changes), author(*ctx, request->who(), what),
                  [reactor, response](KnobRegistry::Result result) {
                    if (!result.ok) {
                      reactor->Finish(Status(StatusCode::INVALID_ARGUMENT, result.error));
                      return;
                    }
                    for (const auto& change : result.changes) toProto(change, response->add_applied());
                    reactor->Finish(Status::OK);
                  });
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::SetPolicy(grpc::CallbackServerContext* ctx,
                                                    const v1::SetPolicyRequest* request,
                                                    v1::SetPolicyResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!run_.canChangeKnobs()) return finish(reactor, StatusCode::FAILED_PRECONDITION, replayRefusal("policy"));
  const std::string& name = request->policy();
  if (!knownPolicy(name))
    return finish(reactor, StatusCode::INVALID_ARGUMENT,
                  "policy: unknown policy '" + echo(name) + "'; valid policies: " + policyNameList());
  // The policy before the change, for the response. RunControl reports only success, so this is
  // read here; two concurrent SetPolicy calls may both report the same old policy (the events in
  // the telemetry stream are exact).
  std::string before = hub_.state().policy;
  ChangeAuthor who = author(*ctx, request->who(), "SetPolicy " + name);
  run_.setPolicy(
      name, who, [reactor, response, name, before = std::move(before), who = who.who](KnobRegistry::Result r) {
        if (!r.ok) {
          reactor->Finish(Status(StatusCode::INVALID_ARGUMENT, "policy: the run refused policy '" + name + "'"));
          return;
        }
        if (before != name) {
          auto* applied = response->mutable_applied();
          applied->set_old_policy(before);
          applied->set_new_policy(name);
          applied->set_who(who);
        }
        reactor->Finish(Status::OK);
      });
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::Pause(grpc::CallbackServerContext* ctx, const v1::PauseRequest* request,
                                                v1::PauseResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!run_.canPace()) return finish(reactor, StatusCode::FAILED_PRECONDITION, kCannotPace);
  onWorker([this, reactor, response, who = author(*ctx, request->who(), "Pause")]() mutable {
    run_.pause(std::move(who));  // returns once the run stands still between events
    response->set_sim_time_us(run_.simTime());
    reactor->Finish(Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::Resume(grpc::CallbackServerContext* ctx, const v1::ResumeRequest* request,
                                                 v1::ResumeResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!run_.canPace()) return finish(reactor, StatusCode::FAILED_PRECONDITION, kCannotPace);
  onWorker([this, reactor, response, who = author(*ctx, request->who(), "Resume")]() mutable {
    run_.resume(std::move(who));
    response->set_sim_time_us(run_.simTime());
    reactor->Finish(Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::SetSpeed(grpc::CallbackServerContext* ctx, const v1::SetSpeedRequest* request,
                                                   v1::SetSpeedResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!run_.canPace()) return finish(reactor, StatusCode::FAILED_PRECONDITION, kCannotPace);
  const double speed = request->speed();
  if (!std::isfinite(speed) || speed < 0 || speed > kMaxControlSpeed)
    return finish(reactor, StatusCode::INVALID_ARGUMENT,
                  "speed: " + number(speed) + " is out of range [0, " + number(kMaxControlSpeed) +
                      "] x real time (0 = as fast as possible)");
  onWorker([this, reactor, response, speed, who = author(*ctx, request->who(), "SetSpeed " + number(speed))]() mutable {
    run_.setSpeed(speed, std::move(who));
    response->set_speed(run_.speed());
    reactor->Finish(Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::Seek(grpc::CallbackServerContext* ctx, const v1::SeekRequest* request,
                                               v1::SeekResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!run_.canSeek())
    return finish(reactor, StatusCode::FAILED_PRECONDITION,
                  "seek works on recordings (serve --replay); a live run cannot go back in time");
  const SimTime time = request->time_us();
  const SimTime end = run_.endTime();
  if (time < 0 || time > end)
    return finish(reactor, StatusCode::OUT_OF_RANGE,
                  "time_us: " + std::to_string(time) + " is outside the recording [0, " + std::to_string(end) + "] us");
  onWorker([this, reactor, response, time,
            who = author(*ctx, request->who(), "Seek " + std::to_string(time) + " us")]() mutable {
    std::string error;
    if (!run_.seek(time, std::move(who), &error)) {
      reactor->Finish(Status(StatusCode::FAILED_PRECONDITION, "seek: " + error));
      return;
    }
    response->set_time_us(run_.simTime());
    // A seek restates the run at the target, starting with RunStarted: the stream continues there
    // (this worker runs one control call at a time, so no other seek came in between).
    const HubState state = hub_.state();
    response->set_seq(state.has_run ? state.run_seq : state.has_events ? state.last_seq + 1 : 0);
    reactor->Finish(Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* ControlService::MarkRun(grpc::CallbackServerContext* ctx, const v1::MarkRunRequest* request,
                                                  v1::MarkRunResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!run_.canMarkRuns())
    return finish(
        reactor, StatusCode::FAILED_PRECONDITION,
        "run markers split a live session (serve --live or --router); a simulation or a recording is one run");
  RunMarkRequest mark;
  switch (request->action()) {
    case v1::RUN_MARK_ACTION_START:
      mark.action = RunMarkAction::Start;
      break;
    case v1::RUN_MARK_ACTION_END:
      mark.action = RunMarkAction::End;
      break;
    default:
      return finish(reactor, StatusCode::INVALID_ARGUMENT,
                    "action: " + std::to_string(request->action()) + " (expected RUN_MARK_ACTION_START or _END)");
  }
  mark.name = request->name();
  for (const auto& p : request->parameters()) mark.parameters.emplace_back(p.name(), p.value());
  if (std::string error = RunMarkBook::validate(mark); !error.empty())
    return finish(reactor, StatusCode::INVALID_ARGUMENT, error);  // names and values already bounded
  ChangeAuthor who = author(
      *ctx, request->who(),
      std::string("MarkRun ") + (mark.action == RunMarkAction::Start ? "start" : "end") + " '" + mark.name + "'");
  mark.who = std::move(who.who);
  mark.origin = std::move(who.origin);
  run_.markRun(std::move(mark), [reactor, response](RunMarkResult result) {
    if (!result.error.empty()) {
      reactor->Finish(Status(result.preconditionFailed ? StatusCode::FAILED_PRECONDITION : StatusCode::INVALID_ARGUMENT,
                             result.error));
      return;
    }
    for (const auto& m : result.marks) toProto(m, response->add_applied());
    reactor->Finish(Status::OK);
  });
  return reactor;
}

}  // namespace kvscope

namespace kvscope {

grpc::ServerUnaryReactor* ControlService::Preview(grpc::CallbackServerContext* ctx, const v1::PreviewRequest* request,
                                                  v1::PreviewResponse* response) {
  bool allowed = false;
  auto* reactor = begin(ctx, &allowed);
  if (!allowed) return reactor;
  if (!previews_)
    return finish(
        reactor, StatusCode::FAILED_PRECONDITION,
        "preview: only a simulation can be forked; this server replays a recording or watches a live cluster");
  ControlStep change;
  if (std::string error = knobChanges(request->changes(), &change.knobs); !error.empty())
    return finish(reactor, StatusCode::INVALID_ARGUMENT, error);
  if (!request->policy().empty()) {
    if (!knownPolicy(request->policy()))
      return finish(reactor, StatusCode::INVALID_ARGUMENT,
                    "policy: unknown policy '" + echo(request->policy()) + "'; valid policies: " + policyNameList());
    change.policy = request->policy();
  }
  if (change.empty())
    return finish(reactor, StatusCode::INVALID_ARGUMENT,
                  "changes, policy: both empty; give a knob change or a policy to preview (valid knobs: " +
                      KnobRegistry::validNames() + ")");
  const double horizon = request->horizon_s() == 0 ? kDefaultPreviewHorizonS : request->horizon_s();
  if (!(horizon >= 1 && horizon <= kMaxPreviewHorizonS))  // NaN fails too
    return finish(reactor, StatusCode::INVALID_ARGUMENT,
                  "horizon_s: " + number(request->horizon_s()) + " is out of range [1, " + number(kMaxPreviewHorizonS) +
                      "] (0 = " + number(kDefaultPreviewHorizonS) + ")");
  if (!previews_->submit(ctx, reactor, std::move(change), secondsToTime(horizon), response))
    return finish(reactor, StatusCode::RESOURCE_EXHAUSTED,
                  "preview: " + std::to_string(PreviewQueue::kMaxWaiting) +
                      " previews are already waiting; try again when one has finished");
  return reactor;
}

}  // namespace kvscope
