#pragma once
// One P->D Mooncake transfer link as P sees it: a FIFO egress queue at the link's bandwidth and
// P's liveness view of the peer (alive / suspect / dead, with the last failure's reason).
#include <cstdint>
#include <deque>

#include "core/events/Event.h"

namespace kvscope {

struct MooncakeLink {
  LinkState state = LinkState::Alive;
  RequestId active = 0;           // the transfer on the wire (0: idle)
  std::deque<RequestId> waiting;  // FIFO egress queue behind it
  std::int32_t queue_depth = 0;   // active + waiting
  std::int64_t bytes_in_flight = 0;
};

}  // namespace kvscope
