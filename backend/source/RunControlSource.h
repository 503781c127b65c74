#pragma once
// A Source over a run driven in this process (the embedded simulation, a recording's replay):
// control calls go straight to its RunControl; its events reach the staging buffer as a sink.
#include <memory>
#include <string>

#include "run/RunControl.h"
#include "source/Source.h"

namespace kvscope {

class RunControlSource : public Source {
 public:
  SourceCapabilities capabilities() const override;
  SourceStatus status() const override;
  void pause() override;
  void resume() override;
  void setSpeed(double speed) override;
  bool seek(SimTime time, std::string* error) override;
  void applyKnobs(std::map<std::string, double> changes, KnobsDone done) override;
  void setPolicy(std::string name, KnobsDone done) override;

  // Who the console's changes are attributed to in the event stream.
  static std::string author();

 protected:
  virtual RunControl* control() const = 0;
  virtual bool finished() const = 0;
  std::string warning_;  // shown in the status (e.g. a recording's damaged tail)
};

}  // namespace kvscope
