#pragma once
// The knob and policy changes made while a run ran (KnobChanged, PolicyChanged). A twin replaying a
// recorded run starts from the settings the run started with and follows none of these, so what
// replays a run (calibrate check --against, TwinReplay) counts them to say so.
#include <variant>

#include "core/events/Event.h"

namespace kvscope {

class RunChangeCounter : public EventSink {
 public:
  void onEvent(const Event& e) override {
    changes_ += std::holds_alternative<KnobChanged>(e.payload) || std::holds_alternative<PolicyChanged>(e.payload);
  }
  long changes() const { return changes_; }

 private:
  long changes_ = 0;
};

}  // namespace kvscope
