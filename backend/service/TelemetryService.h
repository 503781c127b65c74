#pragma once
// kvscope.v1.Telemetry over a TelemetryHub (callback API; no reaction ever blocks).
//
// Subscribe streams the hub's items, one write in flight per subscriber, and ends with OK once the
// run finished and the subscriber's queue is drained. Events leave as the bytes the run's thread
// serialised once: the method is registered raw (ByteBuffer), and each message is framed as a
// TelemetryMessage{event} around those bytes instead of being parsed and serialised again per
// subscriber; the wire format is exactly the generated one. GetState answers from hub.state().
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "backend/service/CallAuthorization.h"
#include "backend/service/TelemetryHub.h"
#include "core/run/RunControl.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

namespace kvscope {

class TelemetryService final
    : public kvscope::v1::Telemetry::WithRawCallbackMethod_Subscribe<kvscope::v1::Telemetry::CallbackService> {
 public:
  // `hub` (and `control`, when given: it fills State.paused and State.speed) must outlive the
  // server this service is registered with.
  explicit TelemetryService(TelemetryHub& hub, const RunControl* control = nullptr);

  // How many may hold a stream, and for how long one may hold it without reading.
  struct Limits {
    std::size_t max_subscribers = 256;          // at once, all clients
    std::size_t max_subscribers_per_peer = 64;  // at once, per host (AuthFailureThrottle::peerKey)
    // A stream whose write has waited this long for the client to read is ended (CANCELLED), its
    // slot freed: a never-read subscription cannot hold one for ever.
    std::chrono::steady_clock::duration stalled_write = std::chrono::seconds(60);
  };
  // Who may subscribe: with a token, only calls carrying it (as Control's); and within `limits`,
  // the next refused with RESOURCE_EXHAUSTED. Call before serving.
  void guard(CallAuthorization auth, Limits limits);
  // Whose refusals GetState reports: the server's guarded services' (its one throttle), also when
  // Telemetry itself is open.
  void reportRefusalsOf(CallAuthorization guarded) { refusals_ = std::move(guarded); }

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
  CallAuthorization refusals_;
  Limits limits_;
  // Open streams per host; shared with the streams, which give their slot back when they end.
  struct PeerCounts {
    std::mutex mutex;
    std::map<std::string, std::size_t> open;
  };
  std::shared_ptr<PeerCounts> peers_ = std::make_shared<PeerCounts>();
  // Streams ended for not reading, for GetState; shared with the streams, which count into it.
  std::shared_ptr<std::atomic<std::uint64_t>> stalled_ended_ = std::make_shared<std::atomic<std::uint64_t>>(0);
};

}  // namespace kvscope
