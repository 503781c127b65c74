#include "bench/soak/ReportFeeder.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <vector>

#include "kvscope/v1/router.grpc.pb.h"

namespace kvscope::soak {

namespace {

using Clock = std::chrono::steady_clock;

// Observation i of a stream: stores (even i) and removes (odd i) the same four blocks on worker i % 3.
v1::Observation valid(std::uint64_t i) {
  v1::Observation o;
  const auto base = (i / 2) * 4;
  auto add = [&](auto* b) {
    b->set_worker(static_cast<int>((i / 2) % 3));
    for (std::uint64_t h = 0; h < 4; ++h) b->add_block_hashes(0x5a5a0000u + base + h);
  };
  if (i % 2 == 0) {
    auto* stored = o.mutable_blocks_stored();
    stored->set_session(1000 + i / 2);
    add(stored);
  } else {
    add(o.mutable_blocks_removed());
  }
  return o;
}

// The invalid kinds, in turn.
v1::Observation invalid(std::uint64_t n) {
  v1::Observation o;
  switch (n % 5) {
    case 0:
      o.mutable_blocks_stored()->set_worker(99);
      break;  // no such worker
    case 1: {
      auto* done = o.mutable_event()->mutable_request_done();  // a negative TTFT other than -1
      done->set_worker(0);
      done->set_ttft_us(-5);
      break;
    }
    case 2:
      o.mutable_event()->mutable_route();
      break;  // KVScope's own kind
    case 3: {
      auto* stored = o.mutable_blocks_stored();  // one hash more than a message may carry
      for (int h = 0; h <= (1 << 16); ++h) stored->add_block_hashes(static_cast<std::uint64_t>(h));
      break;
    }
    default:
      break;  // no kind at all
  }
  return o;
}

}  // namespace

ReportFeeder::ReportFeeder(const std::string& address, double rate, int invalid_every)
    : address_(address), rate_(rate), invalid_every_(invalid_every), thread_([this] { loop(); }) {}

ReportFeeder::~ReportFeeder() {
  stop_ = true;
  thread_.join();
}

ReportFeeder::Counts ReportFeeder::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void ReportFeeder::loop() {
  auto stub = v1::Router::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_));
  auto next = Clock::now();
  std::uint64_t invalid_sent = 0;
  while (!stop_) {
    // One stream: invalid_every - 1 valid observations (an even number: stores and their removals),
    // then one invalid one that ends it.
    grpc::ClientContext ctx;
    v1::ReportSummary summary;
    auto writer = stub->Report(&ctx, &summary);
    const int valid_count = ((invalid_every_ - 1) / 2) * 2;
    int written = 0;
    bool broken = false;
    for (int i = 0; i <= valid_count && !stop_; ++i) {
      std::this_thread::sleep_until(next);
      next += period;
      const bool last = i == valid_count;
      if (!writer->Write(last ? invalid(invalid_sent) : valid(static_cast<std::uint64_t>(i)))) {
        broken = true;
        break;
      }
      if (!last) ++written;
    }
    const bool sent_invalid = !broken && !stop_;
    if (sent_invalid) ++invalid_sent;
    writer->WritesDone();
    const grpc::Status status = writer->Finish();
    std::lock_guard lock(mutex_);
    ++counts_.streams;
    const std::string prefix = "observation " + std::to_string(written) + ":";
    if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT && sent_invalid &&
        status.error_message().rfind(prefix, 0) == 0) {
      counts_.applied += static_cast<std::uint64_t>(written);
      ++counts_.rejected;
    } else if (status.ok() && !sent_invalid) {
      counts_.applied += summary.applied();  // stopped before its invalid observation
    } else {
      ++counts_.unexpected[std::to_string(status.error_code()) + " " + status.error_message().substr(0, 80)];
    }
  }
}

}  // namespace kvscope::soak
