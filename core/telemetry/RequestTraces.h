#pragma once
// The last finished requests as Perfetto draws a request: its prefill on its P, the KV transfer
// from P to D (a flow between the two rows), its decode on its D up to the first token and the
// end. The timeline draws the selected request's (EventTimelineView). Bounded: the newest `limit`
// finished requests, and at most kMaxOpen transfers whose request has not finished yet.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include <absl/container/flat_hash_map.h>

#include "core/events/Event.h"

namespace kvscope {

struct RequestTrace {
  RequestId request = 0;
  SessionId session = 0;
  std::int32_t turn = 0;
  WorkerId worker = kNoWorker;  // its decode worker
  RoutePath path = RoutePath::Direct;
  RequestStatus status = RequestStatus::Ok;
  SimTime arrival = 0;       // done - e2e
  SimTime first_token = -1;  // arrival + TTFT; -1: no token was produced
  SimTime done = 0;
  struct Transfer {
    std::int32_t prefill = -1;
    SimTime start = 0, end = -1;  // end -1: it never finished (the request failed first)
    bool ok = true;
    std::int64_t bytes = 0;
    bool operator==(const Transfer&) const = default;
  };
  std::optional<Transfer> transfer;  // its last KV transfer P -> D (none: served without one)
  bool operator==(const RequestTrace&) const = default;
};

class RequestTraces {
 public:
  static constexpr std::size_t kMaxOpen = 100'000;
  explicit RequestTraces(std::size_t limit) : limit_(limit) {}
  void onEvent(const Event& e);
  // The newest finished request with this id, if still held.
  std::optional<RequestTrace> find(RequestId request) const;

 private:
  std::size_t limit_;
  absl::flat_hash_map<RequestId, RequestTrace::Transfer> open_;
  std::deque<RequestTrace> done_;
};

}  // namespace kvscope
