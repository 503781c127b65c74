#include "backend/source/RemoteRunState.h"

#include <variant>

#include "core/source/Source.h"
#include "kvscope/v1/telemetry.pb.h"

namespace kvscope {

bool RemoteRunState::apply(const Event& event) {
  if (has_seq_ && event.seq <= last_seq_) return false;
  has_seq_ = true;
  last_seq_ = event.seq;
  time_ = event.time;
  if (const auto* c = std::get_if<RunControlChanged>(&event.payload)) {
    if (c->action == RunAction::Paused) paused_ = true;
    if (c->action == RunAction::Resumed) paused_ = false;
    speed_ = c->speed;
  } else if (const auto* r = std::get_if<RunStarted>(&event.payload)) {
    run_.emplace(r->scenario, r->seed);
    run_finished_ = false;
    worker_health_.clear();
  } else if (std::holds_alternative<RunFinished>(event.payload)) {
    run_finished_ = true;
  } else if (const auto* h = std::get_if<WorkerHealthChanged>(&event.payload)) {
    worker_health_[h->worker] = workerHealthText(h->health, h->reason);
  }
  return true;
}

void RemoteRunState::gap(std::uint64_t first_seq, std::uint64_t last_seq) {
  if (last_seq >= first_seq) missed_ += last_seq - first_seq + 1;
  // Not fetched again on a reconnect: the staging buffer only goes forward.
  if (!has_seq_ || last_seq > last_seq_) last_seq_ = last_seq;
  has_seq_ = true;
}

void RemoteRunState::undecodable(std::uint64_t seq, const std::string& why) {
  ++undecodable_;
  undecodable_why_ = "seq " + std::to_string(seq) + ": " + why;
  if (!has_seq_ || seq > last_seq_) last_seq_ = seq;
  has_seq_ = true;
}

void RemoteRunState::resync(const v1::State& state) {
  const bool other_run =
      run_ && state.has_run() && (state.run().scenario() != run_->first || state.run().seed() != run_->second);
  if (state.last_seq() < last_seq_ || other_run) {
    // A restarted server numbers a new run from 0: follow it from its beginning.
    has_seq_ = false;
    last_seq_ = 0;
    missed_ = undecodable_ = 0;
    run_.reset();
    notice_ = "the server started a new run";
  }
  paused_ = state.paused();
  speed_ = state.speed();
}

std::vector<std::string> RemoteRunState::notes() const {
  std::vector<std::string> out;
  if (missed_ > 0) out.push_back("missed " + std::to_string(missed_) + " events");
  if (undecodable_ > 0)
    out.push_back(std::to_string(undecodable_) + " events did not decode (last: " + undecodable_why_ + ")");
  out.push_back(notice_);
  return out;
}

}  // namespace kvscope
