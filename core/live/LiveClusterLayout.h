#pragma once
// What a cluster file says about the run, in the terms the event stream uses: the RunStarted that
// describes it (serving workers, then prefill workers), each configured worker's reference (its
// serving or prefill index and the peer its link events name), and the address book the logs'
// HOST:PORT mentions are resolved with. A live session and a log import build the same picture.
#include <vector>

#include "core/live/ClusterConfig.h"
#include "core/live/LogEventMapper.h"
#include "core/live/WorkerMetricsTracker.h"

namespace kvscope {

struct LiveClusterLayout {
  RunStarted run;                   // scenario "live NAME", profile "live"; no policy or knobs
  std::vector<LiveWorkerRef> refs;  // one per config.workers entry, same order
  LiveAddressBook book;

  static LiveClusterLayout of(const ClusterConfig& config);
  // The index LiveCluster::setHealth() takes for a worker: serving workers first, then prefill ones.
  std::size_t statusIndex(const LiveWorkerRef& r) const;
};

}  // namespace kvscope
