#include "core/source/Source.h"

#include <cstdlib>

namespace kvscope {

std::string consoleAuthor() {
  const char* user = std::getenv("USER");
  return std::string("console") + (user && *user ? std::string("@") + user : "");
}

const char* toString(SourceState s) {
  switch (s) {
    case SourceState::Starting:
      return "starting";
    case SourceState::Connecting:
      return "connecting";
    case SourceState::Running:
      return "running";
    case SourceState::Paused:
      return "paused";
    case SourceState::Finished:
      return "finished";
    case SourceState::Disconnected:
      return "disconnected";
    case SourceState::Failed:
      return "failed";
  }
  return "?";
}

std::string workerHealthText(WorkerHealth health, const std::string& reason) {
  if (health == WorkerHealth::Unknown) return {};
  return reason.empty() ? std::string(toString(health)) : std::string(toString(health)) + ": " + reason;
}

}  // namespace kvscope
