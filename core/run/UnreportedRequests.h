#pragma once
// The live router's routed requests that have not been reported done: a client that routes and
// crashes, or retries a Route after a timeout, must not leave load and block hashes behind for
// ever. Each one is kept in its worker's routing order; due() names those to forget: past the
// expiry deadline, then the oldest over a cap (per worker, overall, and on the block hashes they
// hold, which are what costs memory). A repeated id is the caller's to drop before routing it again.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "core/model/Ids.h"

namespace kvscope {

class UnreportedRequests {
 public:
  struct Limits {
    SimTime expiry = 0;              // a request routed this long ago without a report is forgotten
    std::size_t max_requests = 0;    // tracked requests overall
    std::size_t max_per_worker = 0;  // tracked requests per worker
    std::size_t max_hashes = 0;      // block hashes the tracked requests hold, overall
  };
  struct Due {
    RequestId request;
    WorkerId worker;
  };

  explicit UnreportedRequests(int workers) : order_(static_cast<std::size_t>(workers)), per_worker_(order_.size(), 0) {}

  void routed(RequestId request, WorkerId worker, SimTime at, std::size_t hashes);
  void reported(RequestId request);  // a no-op for a request not tracked
  bool contains(RequestId request) const { return live_.contains(request); }
  // The requests to forget now, oldest first, already removed from tracking.
  std::vector<Due> due(SimTime now, const Limits& limits);

  std::size_t size() const { return live_.size(); }
  std::size_t onWorker(WorkerId w) const { return per_worker_[static_cast<std::size_t>(w)]; }
  std::size_t hashes() const { return hashes_; }
  // Gives the tables' room back after a burst was forgotten (flat tables never shrink by themselves).
  void compact();

 private:
  struct Entry {
    SimTime at;
    RequestId request;
    std::uint64_t generation;  // which routing of the id this entry is (a repeated id routes again)
  };
  struct Live {
    WorkerId worker;
    std::uint64_t generation;
    std::size_t hashes;
  };
  bool isLive(const Entry& e) const;
  void forget(RequestId request);
  void prune(std::deque<Entry>& order);  // drops reported entries when they outnumber the live ones

  std::vector<std::deque<Entry>> order_;  // per worker, in routing order
  std::vector<std::size_t> per_worker_;
  absl::flat_hash_map<RequestId, Live> live_;
  std::size_t hashes_ = 0;
  std::uint64_t next_generation_ = 0;
};

}  // namespace kvscope
