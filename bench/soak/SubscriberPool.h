#pragma once
// bench_soak's Telemetry subscribers: `target` Subscribe streams held open at once over a few
// connections (callback API, raw bytes: the client parses nothing but a message's first byte, to
// tell a gap from an event, so it is not the bottleneck). `silent` of them never read a message:
// the server's flow control and per-subscriber queue must absorb them. Churn cancels random
// streams and opens new ones; a stream the server ends is replaced too. The same pool hoards
// Router.WatchKnobs streams (`method`), never read, on the router.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

namespace kvscope::soak {

class SubscriberPool {
 public:
  struct Counts {
    long connected = 0;                               // streams open now whose headers arrived (the server took them)
    long connected_silent = 0;                        // of those, the ones that never read
    long pending = 0;                                 // started, no answer yet
    std::uint64_t messages = 0, bytes = 0, gaps = 0;  // received so far, all streams
    long opened = 0, churned = 0;                     // streams started; streams this pool cancelled on purpose
    std::map<std::string, long> ended;                // streams the server ended, by status code name
  };

  static constexpr const char* kSubscribe = "/kvscope.v1.Telemetry/Subscribe";
  static constexpr const char* kWatchKnobs = "/kvscope.v1.Router/WatchKnobs";
  SubscriberPool(const std::string& target_address, int target, int silent, int connections,
                 std::string method = kSubscribe);
  ~SubscriberPool();  // cancels every stream and waits for them to end

  // Opens streams up to the target (replacing ended ones) and cancels `churn` random open readers.
  void maintain(int churn);
  Counts counts() const;

 private:
  class Stream;
  void open(bool silent);
  void ended(Stream* s, const grpc::Status& status, bool churned);

  std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;
  std::size_t silent_stubs_ = 0;
  int target_, silent_;
  const std::string method_;
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Stream*> live_;
  std::vector<Stream*> finished_;  // OnDone ran; freed by maintain()
  std::uint64_t next_id_ = 0;
  std::mt19937_64 rng_{42};
  Counts totals_;
  std::atomic<std::uint64_t> messages_{0}, bytes_{0}, gaps_{0};
};

}  // namespace kvscope::soak
