#pragma once
// bench_soak's crashed clients: Router.Route calls at `rate` per second that are never reported,
// each a new session with a realistic prompt (`hashes` block hashes), as a router that routes and
// then dies would leave them. The router must forget them (unreported_expiry_s, max_tracked_*)
// and keep routing at the same latency while it does. Alongside, a knob flip through
// Control.SetKnobs once a second (K between two values), timed: with many WatchKnobs streams
// hoarded, a notification under the router's lock once made every SetKnobs and Route wait.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kvscope::soak {

class RouteFlood {
 public:
  struct Counts {
    std::uint64_t routed = 0;        // Route calls answered OK
    std::vector<double> route_ms;    // each one's latency
    std::uint64_t knob_changes = 0;  // SetKnobs answered OK
    std::vector<double> set_knobs_ms;
    std::map<std::string, std::uint64_t> failed;  // any other outcome, by status
  };

  RouteFlood(const std::string& address, double rate, int hashes);
  ~RouteFlood();  // stops and joins
  Counts counts() const;

 private:
  void routeLoop();
  void knobLoop();

  const std::string address_;
  const double rate_;
  const int hashes_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  Counts counts_;
  std::thread router_, knobs_;
};

}  // namespace kvscope::soak
