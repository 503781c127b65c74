#include "backend/source/RecordingSource.h"

#include <filesystem>

#include "backend/recording/RecordingPlayer.h"
#include "core/telemetry/TelemetryStore.h"

namespace kvscope {

RecordingSource::RecordingSource(const std::string& path, double speed)
    : path_(path),
      name_(std::filesystem::path(path).filename().string()),
      speed_(speed),
      replay_(std::make_unique<RecordingReplay>(path, std::vector<EventSink*>{&staging_})) {
  // One pass over the file for the scrubber (a million events read in well under a second).
  auto overview = std::make_shared<std::vector<Event>>();
  RecordingPlayer player(path);
  for (Event e; player.next(e);)
    if (TelemetryStore::isDiscrete(e.payload)) overview->push_back(std::move(e));
  overview_ = std::move(overview);
  const RecordingDamage& d = replay_->damage();
  if (d.truncated || d.skipped_bytes > 0 || !d.problems.empty()) {
    warning_ = "damaged recording: " + (d.problems.empty() ? std::string("truncated tail") : d.problems.front());
    if (d.problems.size() > 1) warning_ += " (+" + std::to_string(d.problems.size() - 1) + " more)";
  }
}

RecordingSource::~RecordingSource() { stop(); }

std::string RecordingSource::description() const { return "recording " + name_; }

void RecordingSource::start() {
  if (started_) return;
  started_ = true;
  replay_->start(speed_);
}

void RecordingSource::stop() { replay_->stop(); }

}  // namespace kvscope
