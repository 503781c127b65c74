#pragma once
// The default source: a scenario simulated in this process on a worker thread, paced at N x real
// time (10x by default, as the console opens on e3-load-floor).
#include <memory>

#include "core/run/SimulationRun.h"
#include "core/run/SimulationRunner.h"
#include "core/run/WhatIfForecaster.h"
#include "core/source/RunControlSource.h"

namespace kvscope {

class EmbeddedSimulationSource : public RunControlSource {
 public:
  // Loads and validates before anything runs; throws InputError on a bad scenario or options.
  EmbeddedSimulationSource(const std::string& scenario, SimulationOptions options, double speed = 10);
  ~EmbeddedSimulationSource() override;

  std::string description() const override;
  SourceCapabilities capabilities() const override;
  void start() override;
  void stop() override;
  // On a thread of its own; forks at `change.time` (at most the newest time the run has reached).
  void preview(ControlStep change, SimTime horizon, std::shared_ptr<std::atomic<bool>> cancel,
               PreviewDone done) override;

  SimulationRunner& runner() { return *runner_; }
  // The scenario and workload the run started from (what a what-if preview replays).
  const PreparedRun& prepared() const { return forecaster_->prepared(); }

  RunControl* control() const override { return runner_.get(); }

 protected:
  bool finished() const override { return runner_ && runner_->finished(); }

 private:
  std::string scenario_name_;
  double speed_;
  // Shared with previews in flight, which may outlive this source (the console replaced it).
  std::shared_ptr<WhatIfForecaster> forecaster_;
  std::unique_ptr<SimulationRunner> runner_;
};

}  // namespace kvscope
