#include "backend/source/LiveClusterSource.h"

#include <filesystem>

#include "core/live/ClusterConfigLoader.h"

namespace kvscope {

LiveClusterSource::LiveClusterSource(const std::string& cluster_file)
    : LiveClusterSource(ClusterConfigLoader::load(cluster_file), LiveSession::Options{}) {}

LiveClusterSource::LiveClusterSource(ClusterConfig config, LiveSession::Options options) {
  name_ = !config.name.empty() ? config.name : std::filesystem::path(config.file).filename().string();
  // Built now, started in start(): the knobs panel asks capabilities() before the source starts.
  session_ = std::make_unique<LiveSession>(std::move(config), std::vector<EventSink*>{&staging_}, options);
}

LiveClusterSource::~LiveClusterSource() { stop(); }

std::string LiveClusterSource::description() const { return "live cluster " + name_; }

SourceCapabilities LiveClusterSource::capabilities() const {
  SourceCapabilities c;
  c.knobs = session_->canChangeKnobs();
  return c;
}

void LiveClusterSource::start() {
  if (started_ || stopped_) return;
  started_ = true;
  session_->start();
}

void LiveClusterSource::stop() {
  if (stopped_) return;
  stopped_ = true;
  session_->stop();  // joins the scrapers and tailers, emits RunFinished
}

SourceStatus LiveClusterSource::status() const {
  SourceStatus s = RunControlSource::status();
  s.state = !started_ ? SourceState::Starting : stopped_ ? SourceState::Finished : SourceState::Running;
  s.speed = 1;
  // What an operator must see without opening a panel: the workers the scrapers cannot read and
  // the log files the tailer cannot follow, each with the reason.
  std::string detail;
  const auto add = [&detail](const std::string& item) { detail += (detail.empty() ? "" : "; ") + item; };
  for (const LiveWorkerStatus& w : session_->statuses()) {
    s.worker_health[w.name] = workerHealthText(w.health, w.reason);
    if (w.health == WorkerHealth::Degraded || w.health == WorkerHealth::Unreachable)
      add(w.name + " " + s.worker_health[w.name]);
  }
  for (const LiveLogStats& l : session_->logStats()) {
    const std::string file = std::filesystem::path(l.path).filename().string();
    if (!l.tail.error.empty()) add(file + ": " + l.tail.error);
    // A format KVScope does not know shows itself instead of vanishing: the most
    // frequent shape of the file's unknown lines.
    if (!l.unknown_shapes.empty()) add(file + ": " + LineShapeCounter::describe(l.unknown_shapes.front()));
  }
  s.detail = detail;
  return s;
}

}  // namespace kvscope
