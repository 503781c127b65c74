#pragma once
// One P->D Mooncake transfer link as P sees it: a FIFO egress queue at the link's bandwidth and
// P's liveness view of the peer (alive / suspect / dead, with the last failure's reason).
#include <cstdint>
#include <string>

#include "events/Event.h"

namespace kvscope {

struct MooncakeLink {
  LinkState state = LinkState::Alive;
  SimTime busy_until = 0;  // the egress queue is FIFO: the next transfer starts then
  std::int32_t queue_depth = 0;
  std::int64_t bytes_in_flight = 0;
  std::string last_failure;
};

}  // namespace kvscope
