#pragma once
// Control.Preview's work, off gRPC's threads: a fork takes a few hundred milliseconds of two cores,
// so previews run on one thread of their own, one at a time, and at most two wait (a third caller
// gets RESOURCE_EXHAUSTED at once rather than a queue that grows with impatient clients). A caller
// that went away (cancelled, deadline passed) before its turn costs nothing; on shutdown the
// running fork is cancelled and the waiting ones are finished with UNAVAILABLE.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "core/run/WhatIfForecaster.h"
#include "kvscope/v1/control.pb.h"

namespace kvscope {

class PreviewQueue {
 public:
  static constexpr std::size_t kMaxWaiting = 2;

  explicit PreviewQueue(const WhatIfForecaster& forecaster);
  ~PreviewQueue();  // cancels the fork in flight, finishes waiting calls, joins

  // False (and nothing queued) when kMaxWaiting calls already wait. Otherwise the call is finished
  // from the preview thread: OK with `response` filled, or CANCELLED/UNAVAILABLE.
  bool submit(grpc::CallbackServerContext* ctx, grpc::ServerUnaryReactor* reactor, ControlStep change, SimTime horizon,
              v1::PreviewResponse* response);

 private:
  struct Job {
    grpc::CallbackServerContext* ctx;
    grpc::ServerUnaryReactor* reactor;
    ControlStep change;
    SimTime horizon;
    v1::PreviewResponse* response;
  };
  void loop();

  const WhatIfForecaster& forecaster_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> waiting_;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};  // the running fork's: set on shutdown
  std::thread thread_;               // last: started once everything it reads exists
};

}  // namespace kvscope
