#pragma once
// Where a Source's producer thread leaves events for the GUI: producers append, the frame timer
// swaps the whole vector out, so the mutex is held only for an append or a swap and the GUI never
// gets a signal per event (ARCHITECTURE.md "The data flow").
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/events/Event.h"

namespace kvscope {

class StagingBuffer : public EventSink {
 public:
  void onEvent(const Event& e) override {
    std::lock_guard lock(mutex_);
    events_.push_back(e);
    ++total_;
  }
  void append(std::vector<Event>&& batch) {
    std::lock_guard lock(mutex_);
    total_ += batch.size();
    if (events_.empty()) {
      events_ = std::move(batch);
    } else {
      events_.insert(events_.end(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
    }
  }
  // Hands every staged event to `out` (cleared first); `out`'s old storage is reused next time.
  void drain(std::vector<Event>& out) {
    out.clear();
    std::lock_guard lock(mutex_);
    out.swap(events_);
  }
  std::uint64_t total() const {
    std::lock_guard lock(mutex_);
    return total_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  std::uint64_t total_ = 0;
};

}  // namespace kvscope
