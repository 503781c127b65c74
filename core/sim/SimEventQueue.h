#pragma once
// The simulator's agenda: a min-heap on (time, insertion order), so simultaneous events run in the
// order they were scheduled and a seed gives a byte-identical run.
#include <cstdint>
#include <queue>
#include <vector>

#include "core/model/Ids.h"

namespace kvscope {

enum class SimEventType : std::uint8_t {
  Arrival,         // id = session index, a = turn index
  AdmitRpc,        // id = request, a = worker, b = attempt
  Fallback,        // id = request, b = attempt
  PrefillDone,     // id = request, b = attempt
  HandshakeCheck,  // id = request, b = attempt: D must have preallocated by now
  SuspectCheck,    // id = request, b = attempt: half the handshake window passed
  EgressCheck,     // id = request, b = attempt: the transfer must have left P's egress queue by now
  TransferDone,    // id = request, b = attempt
  Iteration,       // a = worker
  Commit,          // id = request
  Timeout,         // id = request
  LinkRecover,     // a = prefill, b = worker
  WorkerRestart,   // a = worker
  Snapshot,
  Deadline,  // the workload's wall deadline: what is still in flight fails
};

struct SimEvent {
  SimTime time = 0;
  std::uint64_t order = 0;
  SimEventType type = SimEventType::Snapshot;
  std::uint64_t id = 0;
  std::int32_t a = 0;
  std::int32_t b = 0;
};

// Decode iterations are most of a run's events (one per D per iteration: 4.5M in a 64-D hour)
// but at most one per worker is pending, so they wait in a heap of their own, a few levels deep
// and in L1, instead of sifting through the thousands of timeouts and think-time arrivals in the
// other. The next event is the earlier of the two tops by (time, insertion order): the same order
// as one heap.
class SimEventQueue {
 public:
  void push(SimTime time, SimEventType type, std::uint64_t id = 0, std::int32_t a = 0, std::int32_t b = 0) {
    (type == SimEventType::Iteration ? iterations_ : others_).push(SimEvent{time, next_order_++, type, id, a, b});
  }
  bool empty() const { return iterations_.empty() && others_.empty(); }
  const SimEvent& top() const { return iterationFirst() ? iterations_.top() : others_.top(); }
  SimEvent pop() {
    Heap& heap = iterationFirst() ? iterations_ : others_;
    SimEvent e = heap.top();
    heap.pop();
    return e;
  }
  std::size_t size() const { return iterations_.size() + others_.size(); }

 private:
  struct Later {
    bool operator()(const SimEvent& x, const SimEvent& y) const {
      return x.time != y.time ? x.time > y.time : x.order > y.order;
    }
  };
  using Heap = std::priority_queue<SimEvent, std::vector<SimEvent>, Later>;
  // Whether the next event is an iteration (insertion orders are unique, so there are no ties).
  bool iterationFirst() const {
    if (iterations_.empty()) return false;
    return others_.empty() || !Later{}(iterations_.top(), others_.top());
  }
  Heap iterations_;
  Heap others_;
  std::uint64_t next_order_ = 0;
};

}  // namespace kvscope
