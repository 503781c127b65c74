#include "source/RunControlSource.h"

#include <cstdlib>

namespace kvscope {

std::string RunControlSource::author() {
  const char* user = std::getenv("USER");
  return std::string("console") + (user && *user ? std::string("@") + user : "");
}

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

void RunControlSource::pause() {
  if (RunControl* c = control()) c->pause(author());
}

void RunControlSource::resume() {
  if (RunControl* c = control()) c->resume(author());
}

void RunControlSource::setSpeed(double speed) {
  if (RunControl* c = control()) c->setSpeed(speed, author());
}

bool RunControlSource::seek(SimTime time, std::string* error) {
  RunControl* c = control();
  if (!c || !c->canSeek()) return Source::seek(time, error);
  return c->seek(time, author(), error);
}

void RunControlSource::applyKnobs(std::map<std::string, double> changes, KnobsDone done) {
  RunControl* c = control();
  if (!c || !c->canChangeKnobs()) return Source::applyKnobs(std::move(changes), std::move(done));
  c->applyKnobs(std::move(changes), author(),
                [done = std::move(done)](KnobRegistry::Result r) { done(r.ok, r.error); });
}

void RunControlSource::setPolicy(std::string name, KnobsDone done) {
  RunControl* c = control();
  if (!c || !c->canChangeKnobs()) return Source::setPolicy(std::move(name), std::move(done));
  c->setPolicy(name, author(), [name, done = std::move(done)](bool ok) {
    done(ok, ok ? std::string() : "unknown policy '" + name + "'");
  });
}

}  // namespace kvscope
