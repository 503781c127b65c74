#include "source/EmbeddedSimulationSource.h"

namespace kvscope {

EmbeddedSimulationSource::EmbeddedSimulationSource(const std::string& scenario, SimulationOptions options, double speed)
    : speed_(speed) {
  options.sinks.clear();
  prepared_ = std::make_unique<PreparedRun>(prepareRun(Scenario::load(scenario), options));
  scenario_name_ = prepared_->scenario.name;
}

EmbeddedSimulationSource::~EmbeddedSimulationSource() { stop(); }

std::string EmbeddedSimulationSource::description() const { return "simulation " + scenario_name_; }

void EmbeddedSimulationSource::start() {
  if (runner_ || !prepared_) return;
  // A copy: the run's start stays at hand for what-if previews, which replay it.
  runner_ = std::make_unique<SimulationRunner>(prepared_->scenario, prepared_->workload, std::vector<EventSink*>{&staging_});
  runner_->start(speed_);
}

void EmbeddedSimulationSource::stop() {
  if (!runner_) return;
  runner_->stop();
  runner_->waitFinished();
}

}  // namespace kvscope
