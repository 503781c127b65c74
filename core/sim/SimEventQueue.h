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
};

struct SimEvent {
  SimTime time = 0;
  std::uint64_t order = 0;
  SimEventType type = SimEventType::Snapshot;
  std::uint64_t id = 0;
  std::int32_t a = 0;
  std::int32_t b = 0;
};

class SimEventQueue {
 public:
  void push(SimTime time, SimEventType type, std::uint64_t id = 0, std::int32_t a = 0, std::int32_t b = 0) {
    heap_.push(SimEvent{time, next_order_++, type, id, a, b});
  }
  bool empty() const { return heap_.empty(); }
  const SimEvent& top() const { return heap_.top(); }
  SimEvent pop() {
    SimEvent e = heap_.top();
    heap_.pop();
    return e;
  }
  std::size_t size() const { return heap_.size(); }

 private:
  struct Later {
    bool operator()(const SimEvent& x, const SimEvent& y) const {
      return x.time != y.time ? x.time > y.time : x.order > y.order;
    }
  };
  std::priority_queue<SimEvent, std::vector<SimEvent>, Later> heap_;
  std::uint64_t next_order_ = 0;
};

}  // namespace kvscope
