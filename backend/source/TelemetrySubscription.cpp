#include "backend/source/TelemetrySubscription.h"

#include "backend/convert/EventConvert.h"

namespace kvscope {

TelemetrySubscription::TelemetrySubscription(v1::Telemetry::Stub& stub, std::uint64_t from_seq, Listener& listener,
                                             const std::string& authorization)
    : listener_(listener) {
  request_.set_from_seq(from_seq);  // no kinds: the console shows every kind
  if (!authorization.empty()) context_.AddMetadata("authorization", authorization);
  stub.async()->Subscribe(&context_, &request_, this);
}

void TelemetrySubscription::start() {
  StartRead(&message_);
  StartCall();
}

void TelemetrySubscription::OnReadDone(bool ok) {
  if (!ok) return;  // the stream ended: OnDone follows with the status
  if (message_.has_gap()) {
    listener_.onGap(message_.gap().first_seq(), message_.gap().last_seq());
  } else if (message_.has_event()) {
    if (fromProto(message_.event(), &event_, &why_))
      listener_.onEvent(event_);
    else
      listener_.onUndecodable(message_.event().seq(), why_);
  }
  StartRead(&message_);
}

void TelemetrySubscription::OnDone(const grpc::Status& status) {
  listener_.onDone(status);  // last: the owner may delete this object from now on
}

}  // namespace kvscope
