#include "core/run/WhatIfForecaster.h"

namespace kvscope {

void WhatIfForecaster::onEvent(const Event& e) {
  if (std::holds_alternative<KnobChanged>(e.payload) || std::holds_alternative<PolicyChanged>(e.payload)) {
    const std::lock_guard lock(mutex_);
    appendControlStep(history_, e);
  }
  // After the change is in the history: a reader who sees this time sees the change too.
  if (e.time > now_.load(std::memory_order_relaxed)) now_.store(e.time, std::memory_order_release);
}

std::vector<ControlStep> WhatIfForecaster::history() const {
  const std::lock_guard lock(mutex_);
  return history_;
}

WhatIfResult WhatIfForecaster::preview(SimTime at, SimTime horizon, const ControlStep& change,
                                       const std::atomic<bool>* cancel) const {
  const SimTime seen = now();
  const SimTime fork = at < 0 || at > seen ? seen : at;
  return WhatIfPreview(run_, history()).run(fork, horizon, change, cancel);
}

}  // namespace kvscope
