#pragma once
// bench_soak's router: Router.Report streams of valid observations (blocks stored on a decode
// worker, then removed again, so its pool never fills) with an invalid one mixed in now and then
// (an unknown worker, a negative count, a kind KVScope makes itself, too many hashes). An invalid
// observation ends its stream with INVALID_ARGUMENT; the feeder opens the next one.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace kvscope::soak {

class ReportFeeder {
 public:
  struct Counts {
    std::uint64_t applied = 0;   // valid observations the server confirmed
    std::uint64_t rejected = 0;  // invalid ones refused with INVALID_ARGUMENT
    std::uint64_t streams = 0;
    std::map<std::string, std::uint64_t> unexpected;  // any other outcome, by status text
  };

  // `rate` observations per second; one in `invalid_every` is invalid.
  ReportFeeder(const std::string& address, double rate, int invalid_every);
  ~ReportFeeder();  // stops and joins
  Counts counts() const;

 private:
  void loop();

  const std::string address_;
  const double rate_;
  const int invalid_every_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  Counts counts_;
  std::thread thread_;
};

}  // namespace kvscope::soak
