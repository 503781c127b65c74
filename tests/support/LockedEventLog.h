#pragma once
// Keeps every event from sinks fed by several threads (scrapers, tailers, RPC threads).
#include <mutex>
#include <vector>

#include "core/events/Event.h"

namespace kvscope::test {

struct LockedEventLog : EventSink {
  std::mutex mutex;
  std::vector<Event> events;
  void onEvent(const Event& e) override {
    std::lock_guard lock(mutex);
    events.push_back(e);
  }
  // The payloads of one kind, in order.
  template <class T>
  std::vector<T> of() {
    std::lock_guard lock(mutex);
    std::vector<T> out;
    for (const auto& e : events)
      if (const auto* x = std::get_if<T>(&e.payload)) out.push_back(*x);
    return out;
  }
};

}  // namespace kvscope::test
