#pragma once
// The cluster's KV events, the only input of the router's prefix index (as Dynamo's KV events and
// SGLang's radix-cache events are on a real cluster).
#include <span>

#include "core/model/Ids.h"

namespace kvscope {

class KvEventListener {
 public:
  virtual ~KvEventListener() = default;
  // `session` now references these blocks on `worker` (they may already have been resident there
  // for another session; the index uses this to tell shared boilerplate from a session's own blocks).
  virtual void onBlocksStored(WorkerId worker, SessionId session, std::span<const BlockHash> hashes) = 0;
  // These blocks are no longer resident on `worker`.
  virtual void onBlocksRemoved(WorkerId worker, std::span<const BlockHash> hashes) = 0;
  // The worker lost its whole pool (crash).
  virtual void onWorkerCleared(WorkerId worker) = 0;
};

}  // namespace kvscope
