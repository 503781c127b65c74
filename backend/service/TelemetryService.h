#pragma once
// kvscope.v1.Telemetry over a TelemetryHub (callback API; no reaction ever blocks).
//
// Subscribe streams the hub's items, one write in flight per subscriber, and ends with OK once the
// run finished and the subscriber's queue is drained. Events leave as the bytes the run's thread
// serialised once: the method is registered raw (ByteBuffer), and each message is framed as a
// TelemetryMessage{event} around those bytes instead of being parsed and serialised again per
// subscriber; the wire format is exactly the generated one. GetState answers from hub.state().
#include <cstddef>
#include <optional>

#include "kvscope/v1/telemetry.grpc.pb.h"
#include "backend/service/CallAuthorization.h"
#include "core/run/RunControl.h"
#include "backend/service/TelemetryHub.h"

namespace kvscope {

class TelemetryService final
    : public kvscope::v1::Telemetry::WithRawCallbackMethod_Subscribe<kvscope::v1::Telemetry::CallbackService> {
 public:
  // `hub` (and `control`, when given: it fills State.paused and State.speed) must outlive the
  // server this service is registered with.
  explicit TelemetryService(TelemetryHub& hub, const RunControl* control = nullptr);

  // Who may subscribe: with a token, only calls carrying it (as Control's); and at most
  // `max_subscribers` at once, the next refused with RESOURCE_EXHAUSTED. Call before serving.
  void guard(CallAuthorization auth, std::size_t max_subscribers);

  grpc::ServerWriteReactor<grpc::ByteBuffer>* Subscribe(grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* GetState(grpc::CallbackServerContext* context, const v1::GetStateRequest* request,
                                     v1::State* response) override;

  // The kind names SubscribeRequest.kinds accepts (the core's eventKindName of every payload).
  static const std::vector<std::string>& kindNames();

 private:
  TelemetryHub& hub_;
  const RunControl* control_;
  CallAuthorization auth_;
  std::size_t max_subscribers_ = 256;
};

}  // namespace kvscope
