#pragma once
// One Telemetry.Subscribe call on the gRPC callback API (STYLE.md, gRPC): each message is converted
// to a core Event (EventConvert) and handed to the listener, then the next read is armed. Nothing
// here blocks or retries: reconnecting is the owner's decision, made from onDone.
#include <cstdint>
#include <string>

#include <grpcpp/grpcpp.h>

#include "core/events/Event.h"
#include "kvscope/v1/telemetry.grpc.pb.h"

namespace kvscope {

class TelemetrySubscription final : public grpc::ClientReadReactor<v1::TelemetryMessage> {
 public:
  // Called on gRPC's threads, one call at a time and in stream order.
  class Listener {
   public:
    virtual void onEvent(const Event& event) = 0;
    virtual void onGap(std::uint64_t first_seq, std::uint64_t last_seq) = 0;
    // An event that did not convert (skipped): its sequence number and what was wrong.
    virtual void onUndecodable(std::uint64_t seq, const std::string& why) = 0;
    // The last call: the subscription may be destroyed as soon as this returns (or from another
    // thread once this has been observed).
    virtual void onDone(const grpc::Status& status) = 0;

   protected:
    ~Listener() = default;
  };

  // `authorization` ("Bearer <token>", or empty): a server with --token-file guards Telemetry too.
  TelemetrySubscription(v1::Telemetry::Stub& stub, std::uint64_t from_seq, Listener& listener,
                        const std::string& authorization = {});

  std::uint64_t fromSeq() const { return request_.from_seq(); }
  // Starts reading. Separate from the constructor so the owner can record the call first.
  void start();
  // Ends the call soon (onDone follows with CANCELLED). Safe from any thread, before or after start().
  void cancel() { context_.TryCancel(); }

  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  grpc::ClientContext context_;
  v1::SubscribeRequest request_;
  v1::TelemetryMessage message_;
  Event event_;
  std::string why_;
  Listener& listener_;
};

}  // namespace kvscope
