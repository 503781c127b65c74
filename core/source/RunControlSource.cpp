#include "core/source/RunControlSource.h"

namespace kvscope {

SourceCapabilities RunControlSource::capabilities() const {
  RunControl* c = control();
  if (!c) return {};
  return {true, true, c->canSeek(), c->canChangeKnobs()};
}

SourceStatus RunControlSource::status() const {
  SourceStatus s;
  RunControl* c = control();
  if (!c) {
    s.state = SourceState::Starting;
    return s;
  }
  s.state = finished() ? SourceState::Finished : c->paused() ? SourceState::Paused : SourceState::Running;
  s.time = c->simTime();
  s.end = c->endTime();
  s.speed = c->speed();
  s.detail = warning_;
  return s;
}

}  // namespace kvscope
