#include "core/telemetry/RequestTraces.h"

#include <algorithm>
#include <variant>

namespace kvscope {

void RequestTraces::onEvent(const Event& e) {
  if (const auto* started = std::get_if<TransferStarted>(&e.payload)) {
    // A source that never reports finishes (or lost them) must not grow this without bound.
    if (open_.size() >= kMaxOpen) open_.clear();
    open_[started->request] = {started->prefill, e.time, -1, true, started->bytes};
  } else if (const auto* finished = std::get_if<TransferFinished>(&e.payload)) {
    auto it = open_.find(finished->request);
    if (it == open_.end()) return;
    it->second.end = e.time;
    it->second.ok = finished->ok;
  } else if (const auto* d = std::get_if<RequestDone>(&e.payload)) {
    RequestTrace t;
    t.request = d->request;
    t.session = d->session;
    t.turn = d->turn;
    t.worker = d->worker;
    t.path = d->path;
    t.status = d->status;
    t.done = e.time;
    t.arrival = e.time - d->e2e;
    t.first_token = d->ttft < 0 ? -1 : t.arrival + d->ttft;
    if (auto it = open_.find(d->request); it != open_.end()) {
      t.transfer = it->second;
      open_.erase(it);
    }
    if (done_.size() >= limit_ && !done_.empty()) done_.pop_front();
    done_.push_back(t);
  }
}

std::optional<RequestTrace> RequestTraces::find(RequestId request) const {
  // The newest first: an id a restarted source reused names its latest request.
  const auto it =
      std::find_if(done_.rbegin(), done_.rend(), [request](const RequestTrace& t) { return t.request == request; });
  return it == done_.rend() ? std::nullopt : std::optional<RequestTrace>(*it);
}

}  // namespace kvscope
