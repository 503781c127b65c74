#pragma once
// The default source: a scenario simulated in this process on a worker thread, paced at N x real
// time (10x by default, as the console opens on e3-load-floor).
#include <memory>

#include "run/SimulationRun.h"
#include "run/SimulationRunner.h"
#include "source/RunControlSource.h"

namespace kvscope {

class EmbeddedSimulationSource : public RunControlSource {
 public:
  // Loads and validates before anything runs; throws InputError on a bad scenario or options.
  EmbeddedSimulationSource(const std::string& scenario, SimulationOptions options, double speed = 10);
  ~EmbeddedSimulationSource() override;

  std::string description() const override;
  void start() override;
  void stop() override;

  SimulationRunner& runner() { return *runner_; }
  // The scenario and workload the run started from (what a what-if preview replays).
  const PreparedRun& prepared() const { return *prepared_; }

 protected:
  RunControl* control() const override { return runner_.get(); }
  bool finished() const override { return runner_ && runner_->finished(); }

 private:
  std::string scenario_name_;
  double speed_;
  std::unique_ptr<PreparedRun> prepared_;
  std::unique_ptr<SimulationRunner> runner_;
};

}  // namespace kvscope
