#include "core/source/EmbeddedSimulationSource.h"

#include <thread>

#include "core/run/BackgroundWork.h"

namespace kvscope {

EmbeddedSimulationSource::EmbeddedSimulationSource(const std::string& scenario, SimulationOptions options, double speed)
    : speed_(speed) {
  options.sinks.clear();
  forecaster_ = std::make_shared<WhatIfForecaster>(prepareRun(Scenario::load(scenario), options));
  scenario_name_ = forecaster_->prepared().scenario.name;
}

EmbeddedSimulationSource::~EmbeddedSimulationSource() { stop(); }

std::string EmbeddedSimulationSource::description() const { return "simulation " + scenario_name_; }

SourceCapabilities EmbeddedSimulationSource::capabilities() const {
  SourceCapabilities c = RunControlSource::capabilities();
  c.preview = runner_ != nullptr;
  return c;
}

void EmbeddedSimulationSource::start() {
  if (runner_) return;
  // A copy: the run's start stays at hand for what-if previews, which replay it; the forecaster
  // sees every event (for the knob and policy changes a preview replays) before the console does.
  const PreparedRun& run = forecaster_->prepared();
  runner_ = std::make_unique<SimulationRunner>(run.scenario, run.workload,
                                               std::vector<EventSink*>{forecaster_.get(), &staging_});
  runner_->start(speed_);
}

void EmbeddedSimulationSource::stop() {
  if (!runner_) return;
  runner_->stop();
  runner_->waitFinished();
}

void EmbeddedSimulationSource::preview(ControlStep change, SimTime horizon, std::shared_ptr<std::atomic<bool>> cancel,
                                       PreviewDone done) {
  // Detached: the fork owns what it reads (the forecaster is shared), so the source may go first.
  std::thread([forecaster = forecaster_, change = std::move(change), horizon, cancel = std::move(cancel),
               done = std::move(done)] {
    lowerThisThreadsPriority();
    auto result = std::make_shared<WhatIfResult>(forecaster->preview(change.time, horizon, change, cancel.get()));
    done(std::move(result), {});
    giveFreeHeapBack();  // the fork's two replays are gone; what it answered is a few series
  }).detach();
}

}  // namespace kvscope
