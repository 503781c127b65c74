#include "backend/service/PreviewQueue.h"

#include "backend/convert/PreviewConvert.h"

namespace kvscope {

PreviewQueue::PreviewQueue(const WhatIfForecaster& forecaster) : forecaster_(forecaster) {
  thread_ = std::thread([this] { loop(); });
}

PreviewQueue::~PreviewQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cancel_.store(true);
  wake_.notify_all();
  thread_.join();
}

bool PreviewQueue::submit(grpc::CallbackServerContext* ctx, grpc::ServerUnaryReactor* reactor, ControlStep change,
                          SimTime horizon, v1::PreviewResponse* response) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || waiting_.size() >= kMaxWaiting) return false;
    waiting_.push_back(Job{ctx, reactor, std::move(change), horizon, response});
  }
  wake_.notify_one();
  return true;
}

void PreviewQueue::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (stopping_) {
      for (Job& job : waiting_)
        job.reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
      waiting_.clear();
      return;
    }
    Job job = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    if (job.ctx->IsCancelled()) {
      job.reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away before the preview started"));
    } else {
      const WhatIfResult result = forecaster_.preview(-1, job.horizon, job.change, &cancel_);
      if (result.cancelled) {
        job.reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
      } else {
        toProto(result, job.response);
        job.reactor->Finish(grpc::Status::OK);
      }
    }
    lock.lock();
  }
}

}  // namespace kvscope
