#include "backend/source/RemoteRunControl.h"

#include "backend/source/RemoteSource.h"

namespace kvscope {

namespace {

KnobRegistry::Result resultOf(const grpc::Status& status) {
  if (status.ok()) return {};
  return {false, status.error_message(), {}};  // INVALID_ARGUMENT names the knob and its range
}

}  // namespace

void RemoteRunControl::applyKnobs(std::map<std::string, double> changes, ChangeAuthor author, Done done) {
  v1::SetKnobsRequest request;
  for (const auto& [name, value] : changes) {
    auto* change = request.add_changes();
    change->set_name(name);
    change->set_value(value);
  }
  request.set_who(author.who);
  source_.call<v1::SetKnobsResponse>(
      std::move(request), true,
      [](RemoteSource::Stubs& s, grpc::ClientContext* c, const v1::SetKnobsRequest* q, v1::SetKnobsResponse* r,
         auto cb) { s.control->async()->SetKnobs(c, q, r, std::move(cb)); },
      [done = std::move(done)](const grpc::Status& status, const v1::SetKnobsResponse&) { done(resultOf(status)); });
}

void RemoteRunControl::setPolicy(std::string name, ChangeAuthor author, Done done) {
  v1::SetPolicyRequest request;
  request.set_policy(std::move(name));
  request.set_who(author.who);
  source_.call<v1::SetPolicyResponse>(
      std::move(request), true,
      [](RemoteSource::Stubs& s, grpc::ClientContext* c, const v1::SetPolicyRequest* q, v1::SetPolicyResponse* r,
         auto cb) { s.control->async()->SetPolicy(c, q, r, std::move(cb)); },
      [done = std::move(done)](const grpc::Status& status, const v1::SetPolicyResponse&) { done(resultOf(status)); });
}

void RemoteRunControl::pause(ChangeAuthor author) {
  v1::PauseRequest request;
  request.set_who(author.who);
  source_.call<v1::PauseResponse>(
      std::move(request), true,
      [](RemoteSource::Stubs& s, grpc::ClientContext* c, const v1::PauseRequest* q, v1::PauseResponse* r, auto done) {
        s.control->async()->Pause(c, q, r, std::move(done));
      },
      [this](const grpc::Status& status, const v1::PauseResponse&) {
        source_.controlResult("pause", status);
        if (!status.ok()) return;
        std::lock_guard lock(source_.mutex_);
        source_.run_state_.setPaused(true);
      });
}

void RemoteRunControl::resume(ChangeAuthor author) {
  v1::ResumeRequest request;
  request.set_who(author.who);
  source_.call<v1::ResumeResponse>(
      std::move(request), true,
      [](RemoteSource::Stubs& s, grpc::ClientContext* c, const v1::ResumeRequest* q, v1::ResumeResponse* r, auto done) {
        s.control->async()->Resume(c, q, r, std::move(done));
      },
      [this](const grpc::Status& status, const v1::ResumeResponse&) {
        source_.controlResult("resume", status);
        if (!status.ok()) return;
        std::lock_guard lock(source_.mutex_);
        source_.run_state_.setPaused(false);
      });
}

void RemoteRunControl::setSpeed(double speed, ChangeAuthor author) {
  v1::SetSpeedRequest request;
  request.set_speed(speed);
  request.set_who(author.who);
  source_.call<v1::SetSpeedResponse>(
      std::move(request), true,
      [](RemoteSource::Stubs& s, grpc::ClientContext* c, const v1::SetSpeedRequest* q, v1::SetSpeedResponse* r,
         auto done) { s.control->async()->SetSpeed(c, q, r, std::move(done)); },
      [this](const grpc::Status& status, const v1::SetSpeedResponse& response) {
        source_.controlResult("speed", status);
        if (!status.ok()) return;
        std::lock_guard lock(source_.mutex_);
        source_.run_state_.setSpeed(response.speed());
      });
}

bool RemoteRunControl::canSeek() const {
  std::lock_guard lock(source_.mutex_);
  return source_.seek_refusal_.empty();
}

bool RemoteRunControl::seek(SimTime time, ChangeAuthor author, std::string* error) {
  {
    std::lock_guard lock(source_.mutex_);
    if (!source_.seek_refusal_.empty()) {
      if (error) *error = source_.seek_refusal_;
      return false;
    }
  }
  if (error) error->clear();
  v1::SeekRequest request;
  request.set_time_us(time);
  request.set_who(author.who);
  source_.call<v1::SeekResponse>(
      std::move(request), true,
      [](RemoteSource::Stubs& s, grpc::ClientContext* c, const v1::SeekRequest* q, v1::SeekResponse* r, auto done) {
        s.control->async()->Seek(c, q, r, std::move(done));
      },
      [this](const grpc::Status& status, const v1::SeekResponse&) { source_.seekAnswered(status); });
  return true;
}

bool RemoteRunControl::paused() const {
  std::lock_guard lock(source_.mutex_);
  return source_.run_state_.paused();
}

double RemoteRunControl::speed() const {
  std::lock_guard lock(source_.mutex_);
  return source_.run_state_.speed();
}

SimTime RemoteRunControl::simTime() const {
  std::lock_guard lock(source_.mutex_);
  return source_.run_state_.time();
}

}  // namespace kvscope
