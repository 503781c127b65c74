#pragma once
// kvscope.v1.Control over a RunControl: converts requests to core values, validates them on the
// RPC thread (so a bad request never reaches the run and the state stays unchanged), and finishes
// each call from the run's own callback. No handler blocks a gRPC thread: knob and policy changes
// finish when the run's thread reports back; pause/resume/speed/seek, which RunControl performs
// synchronously (pause waits for the run to reach an event boundary), run on one small worker
// thread of this service, in the order they arrived.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "backend/service/CallAuthorization.h"
#include "backend/service/PreviewQueue.h"
#include "core/run/RunControl.h"
#include "kvscope/v1/control.grpc.pb.h"

namespace kvscope {

class TelemetryHub;

// The speed range SetSpeed accepts: 0 = as fast as possible; above 10000x pacing means nothing.
inline constexpr double kMaxControlSpeed = 10000;

class ControlService final : public v1::Control::CallbackService {
 public:
  // With a token, every call needs `authorization: Bearer <token>` (UNAUTHENTICATED otherwise,
  // before the request is even looked at; RESOURCE_EXHAUSTED while the caller is locked out for
  // failing too often). Each change handed to the run is also a line in `log`, with the caller's
  // label, address and admission. `run` and `hub` must outlive the service, and so must
  // `forecaster`, given for a simulation: it answers Preview (FAILED_PRECONDITION without one).
  ControlService(RunControl& run, const TelemetryHub& hub, CallAuthorization auth = {},
                 const WhatIfForecaster* forecaster = nullptr, std::function<void(const std::string&)> log = {});
  // Runs what the worker still holds (each finishes a call), then joins it. Shut the gRPC server
  // down first: it waits for those calls.
  ~ControlService() override;

  grpc::ServerUnaryReactor* GetKnobs(grpc::CallbackServerContext* ctx, const v1::GetKnobsRequest* request,
                                     v1::GetKnobsResponse* response) override;
  grpc::ServerUnaryReactor* SetKnobs(grpc::CallbackServerContext* ctx, const v1::SetKnobsRequest* request,
                                     v1::SetKnobsResponse* response) override;
  grpc::ServerUnaryReactor* SetPolicy(grpc::CallbackServerContext* ctx, const v1::SetPolicyRequest* request,
                                      v1::SetPolicyResponse* response) override;
  grpc::ServerUnaryReactor* Pause(grpc::CallbackServerContext* ctx, const v1::PauseRequest* request,
                                  v1::PauseResponse* response) override;
  grpc::ServerUnaryReactor* Resume(grpc::CallbackServerContext* ctx, const v1::ResumeRequest* request,
                                   v1::ResumeResponse* response) override;
  grpc::ServerUnaryReactor* SetSpeed(grpc::CallbackServerContext* ctx, const v1::SetSpeedRequest* request,
                                     v1::SetSpeedResponse* response) override;
  grpc::ServerUnaryReactor* Seek(grpc::CallbackServerContext* ctx, const v1::SeekRequest* request,
                                 v1::SeekResponse* response) override;
  grpc::ServerUnaryReactor* MarkRun(grpc::CallbackServerContext* ctx, const v1::MarkRunRequest* request,
                                    v1::MarkRunResponse* response) override;
  grpc::ServerUnaryReactor* Preview(grpc::CallbackServerContext* ctx, const v1::PreviewRequest* request,
                                    v1::PreviewResponse* response) override;

 private:
  // The call's reactor, already finished with UNAUTHENTICATED when the token is missing or wrong.
  grpc::ServerUnaryReactor* begin(grpc::CallbackServerContext* ctx, bool* allowed) const;
  // The request's label (controlAuthor) with where the call came from, as the run's events carry it;
  // logged with `what` the call asks for.
  ChangeAuthor author(const grpc::CallbackServerContext& ctx, const std::string& who, const std::string& what) const;
  // Runs `fn` on the worker thread (RunControl calls that may wait for the run's thread).
  void onWorker(std::function<void()> fn);
  void workerLoop();

  RunControl& run_;
  const TelemetryHub& hub_;
  CallAuthorization auth_;
  std::function<void(const std::string&)> log_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread worker_;                      // started once everything it reads exists
  std::unique_ptr<PreviewQueue> previews_;  // simulations only; last: its thread stops first
};

// Who made a change, as KnobChanged/PolicyChanged/RunControlChanged carry it: the request's own label (capped in
// length, control characters replaced) or else "grpc:" and the peer's address ("grpc:127.0.0.1:53012").
// The label proves nothing; the events' ChangeOrigin says where the call really came from.
std::string controlAuthor(const std::string& requested, const std::string& peer);

}  // namespace kvscope
