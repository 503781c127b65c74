#pragma once
// The cluster's KV events, the only input of the router's prefix index (as Dynamo's KV events and
// SGLang's radix-cache events are on a real cluster).
#include <span>
#include <vector>

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

  // The same events where the sender knows the chain a span sits on (the twin's pools do): the
  // blocks are path[from..], under path[..from). A listener that keeps state per chain (ChainIndex)
  // takes these; the default passes the span on as above (a removal deepest block first, as the
  // pools free them).
  virtual void onChainStored(WorkerId worker, SessionId session, std::span<const BlockHash> path, std::size_t from) {
    onBlocksStored(worker, session, path.subspan(from));
  }
  virtual void onChainRemoved(WorkerId worker, std::span<const BlockHash> path, std::size_t from) {
    const std::vector<BlockHash> deepest_first(path.rbegin(), path.rend() - static_cast<std::ptrdiff_t>(from));
    onBlocksRemoved(worker, deepest_first);
  }
};

}  // namespace kvscope
