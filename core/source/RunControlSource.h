#pragma once
// A Source over a run driven in this process (the embedded simulation, a recording's replay, a
// live session): its control() is the run's own RunControl; its events reach the staging buffer as
// a sink.
#include <memory>
#include <string>

#include "core/run/RunControl.h"
#include "core/source/Source.h"

namespace kvscope {

class RunControlSource : public Source {
 public:
  SourceCapabilities capabilities() const override;
  SourceStatus status() const override;

 protected:
  virtual bool finished() const = 0;
  std::string warning_;  // shown in the status (e.g. a recording's damaged tail)
};

}  // namespace kvscope
