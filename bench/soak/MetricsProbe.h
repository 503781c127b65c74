#pragma once
// bench_soak's /metrics clients: a scraper (one GET per interval, as Prometheus does, timed from
// connect to the end of the body) and a crowd of hostile sockets, some connected and silent, some
// dribbling a request head one byte per second. A hostile socket the server closes is opened again.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kvscope::soak {

class MetricsProbe {
 public:
  struct Counts {
    std::vector<double> scrape_ms;         // every successful scrape's latency
    long scrape_failures = 0;              // no answer, an error, or not "200" within 15 s
    long idle_open = 0, trickle_open = 0;  // hostile sockets connected now
    long hostile_closed = 0;               // times the server closed (evicted or timed out) a hostile socket
    std::string last_body;                 // the newest successful scrape's answer (headers included)
  };
  // The sum of a metric's samples in an exposition (every label set), 0 when absent.
  static double sumOf(const std::string& exposition, const std::string& name);

  MetricsProbe(const std::string& host_port, int scrape_interval_ms, int idle, int trickle);
  ~MetricsProbe();  // stops and joins
  Counts counts() const;

 private:
  void scrapeLoop();
  void hostileLoop();

  std::string host_;
  int port_ = 0;
  const int interval_ms_, idle_, trickle_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  Counts counts_;
  std::thread scraper_, hostile_;
};

}  // namespace kvscope::soak
