#include "bench/soak/RouteFlood.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "kvscope/v1/control.grpc.pb.h"
#include "kvscope/v1/router.grpc.pb.h"

namespace kvscope::soak {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string outcome(const grpc::Status& s) {
  return std::to_string(s.error_code()) + " " + s.error_message().substr(0, 80);
}

}  // namespace

RouteFlood::RouteFlood(const std::string& address, double rate, int hashes)
    : address_(address), rate_(rate), hashes_(hashes), router_([this] { routeLoop(); }), knobs_([this] {
        knobLoop();
      }) {}

RouteFlood::~RouteFlood() {
  stop_ = true;
  router_.join();
  knobs_.join();
}

RouteFlood::Counts RouteFlood::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void RouteFlood::routeLoop() {
  auto stub = v1::Router::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_));
  auto next = Clock::now();
  v1::RouteRequest request;
  request.set_turn(1);
  request.set_input_tokens(static_cast<std::int64_t>(hashes_) * 24);
  for (int h = 0; h < hashes_; ++h) request.add_block_hashes(0);
  for (std::uint64_t id = 1; !stop_; ++id) {
    std::this_thread::sleep_until(next);
    next += period;
    if (Clock::now() - next > std::chrono::seconds(1)) next = Clock::now();  // behind: no burst to catch up
    request.set_request_id(id);
    request.set_session_id(id);  // a new session every time: nothing shared, nothing reported
    for (int h = 0; h < hashes_; ++h) request.set_block_hashes(h, (id << 16) + static_cast<std::uint64_t>(h));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::RouteReply reply;
    const auto t0 = Clock::now();
    const grpc::Status status = stub->Route(&ctx, request, &reply);
    const double ms = msSince(t0);
    std::lock_guard lock(mutex_);
    if (status.ok()) {
      ++counts_.routed;
      counts_.route_ms.push_back(ms);
    } else {
      ++counts_.failed["Route " + outcome(status)];
    }
  }
}

void RouteFlood::knobLoop() {
  auto stub = v1::Control::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  auto next = Clock::now();
  for (int i = 0; !stop_; ++i) {
    next += std::chrono::seconds(1);
    while (!stop_ && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (stop_) break;
    v1::SetKnobsRequest request;
    auto* k = request.add_changes();
    k->set_name("K");
    k->set_value(i % 2 ? 200 : 100);
    request.set_who("bench_soak");
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::SetKnobsResponse reply;
    const auto t0 = Clock::now();
    const grpc::Status status = stub->SetKnobs(&ctx, request, &reply);
    const double ms = msSince(t0);
    std::lock_guard lock(mutex_);
    if (status.ok()) {
      ++counts_.knob_changes;
      counts_.set_knobs_ms.push_back(ms);
    } else {
      ++counts_.failed["SetKnobs " + outcome(status)];
    }
  }
}

}  // namespace kvscope::soak
